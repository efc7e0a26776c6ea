#!/usr/bin/env bash
# H100: how hard should the SMs push the bus? CUDA.v8_streams (over v6's kernel) at 16384^2
# float32 with the down kernel's grid from 8 to 132 blocks, and 3 or 4 streams.
source "$(dirname "$0")/../device_call.sh"
make -C CUDA.v8_streams -j16 STEP_KERNEL=CUDA.v6_locality > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
V8=CUDA.v8_streams/transpose
for s in 3 4; do for b in 8 16 24 32 48 64 132; do
  timeout 60 $V8 16384 16384 --pieces 64 --streams $s --down-blocks $b --reps 5 --csv $R/v8_blocks.csv > $R/last.log 2>&1
  echo "streams $s blocks $b rc=$? $(grep -E '^  pipeline' $R/last.log | awk '{print $(NF-4), $(NF-3), $(NF-2)}')"
done; done
timeout 60 $V8 16384 16384 --pieces 64 --down-blocks 16 --timeline $R/timeline_b16.csv --reps 3 > $R/t.log 2>&1
timeout 60 $V8 8192 8192 --dtype float64 --pieces 32 --down-blocks 16 --reps 5 > $R/f64.log 2>&1; grep -E "^  (pipeline|serial)" $R/f64.log

#!/usr/bin/env bash
# First call of the second session (H100): does the SM-written down path of CUDA.v8_streams reach
# the bus? v8 built over v6's kernel (v7 was being rewritten), its GPU tests, a small sweep of
# (down path, streams, pieces), a timeline.
source "$(dirname "$0")/../device_call.sh"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $R/machine.txt 2>&1
make -C CUDA.v8_streams -j16 STEP_KERNEL=CUDA.v6_locality > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
echo "build $((SECONDS-t0)) s"
V8=CUDA.v8_streams/transpose
for a in "16384 16384 --down copy-engine --streams 3 --pieces 8" \
         "16384 16384 --down kernel --streams 3 --pieces 8" \
         "16384 16384 --down kernel --streams 3 --pieces 32" \
         "16384 16384 --down kernel --streams 3 --pieces 64" \
         "16384 16384 --down kernel --streams 4 --pieces 32" \
         "16384 16384 --down kernel --streams 2 --pieces 32" \
         "16384 16384" \
         "8192 8192 --dtype float64" \
         "8192 8192 --dtype float64 --down copy-engine" \
         "8191 8193 --dtype uint8" ; do
  timeout 60 $V8 $a --reps 5 --csv $R/v8_sweep.csv > $R/last.log 2>&1; echo "v8 $a rc=$?"; grep -E "pipeline|copy-engine-down|serial|ceiling|speedup" $R/last.log | grep -v "^  *check\|pieces  " | head -5
done
timeout 60 $V8 16384 16384 --timeline $R/timeline_16k_f32.csv --reps 3 > $R/timeline_run.log 2>&1; echo "timeline rc=$?"
echo "sweep done $((SECONDS-t0)) s"
timeout 150 python3 -m pytest -q -x -rs tests/test_streams_step.py -k "not past_2_pow" > $R/test_streams.log 2>&1; echo "tests rc=$? $((SECONDS-t0)) s"; tail -3 $R/test_streams.log

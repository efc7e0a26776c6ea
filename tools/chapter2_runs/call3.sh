#!/usr/bin/env bash
set -uo pipefail
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$SECONDS
make -j16 all tests-build > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $((SECONDS-t0)) s"; grep -i "nccl\|not built" $OUT/build.log | head -3
DT="uint8 float16 bfloat16 float32 float64 complex64 complex128"
for d in $DT; do for s in CUDA.v6_locality CUDA.v7_packed CUDA.cublas; do $s/transpose 8191 8193 --dtype $d --csv $OUT/odd.csv > /dev/null 2>&1; done; done
python3 -c "
import csv; r=list(csv.DictReader(open('$OUT/odd.csv')))
for x in r: print(x['step'], x['dtype'], x['pct_of_ceiling'], x['median_ms'])"
echo "odd $((SECONDS-t0)) s"
timeout 330 python3 -m pytest -q -rs -x tests/test_cuda_steps.py -k "not past_2_pow" > $OUT/test_cuda.log 2>&1; echo "cuda tests rc=$? $((SECONDS-t0)) s"; tail -4 $OUT/test_cuda.log
timeout 90 python3 -m pytest -q -rs tests/test_streams_step.py > $OUT/test_streams.log 2>&1; echo "streams tests rc=$? $((SECONDS-t0)) s"; grep -E "passed|failed|Error|assert" $OUT/test_streams.log | head -8
timeout 100 python3 -m pytest -q -rs tests/test_multigpu_step.py -k "not dtype or float32 or uint8 or complex128" > $OUT/test_multigpu.log 2>&1; echo "multigpu tests rc=$? $((SECONDS-t0)) s"; grep -E "passed|failed|Error|assert" $OUT/test_multigpu.log | head -8
CUDA.v8_streams/transpose 16384 16384 --csv $OUT/v8.csv --timeline $OUT/timeline_16k_f32.csv 2>&1 | tail -6
CUDA.v8_streams/transpose 8192 8192 --dtype float64 --csv $OUT/v8.csv 2>&1 | tail -4
CUDA.v9_multigpu/transpose 8192 8192 --gpus 1 --csv $OUT/v9.csv 2>&1 | tail -5
CUDA.v9_multigpu/transpose 4096 4096 --virtual-ranks 4 --csv $OUT/v9.csv 2>&1 | tail -5
echo "end $((SECONDS-t0)) s"

#!/usr/bin/env bash
# Final H200 call: every step x type (make dtypes, with cuBLASLt and PyTorch), run-all and the
# grader's expected ranges, v8 settings, the course checks, uint8 past 2^32 elements on v7.
source "$(dirname "$0")/../device_call.sh"
{ nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv; lscpu | grep -E "Model name|^CPU\(s\)"; nvcc --version | tail -1; python3 -c "import torch; print('torch', torch.__version__)"; git log -1 --format=%h 2>/dev/null; } > $R/machine.txt 2>&1
make -j16 all tests-build > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
echo "build $((SECONDS-t0)) s"
for d in uint8 float16 bfloat16 float32 float64 complex64 complex128; do CUDA.cublaslt/transpose 37 4111 --dtype $d --reps 2 > /dev/null 2>$R/lt_$d.err; echo "cublaslt $d rc=$? $(tail -1 $R/lt_$d.err)"; done | tee $R/cublaslt_types.log
timeout 230 make dtypes RESULTS=$R > $R/make-dtypes.log 2>&1; echo "dtypes rc=$? $((SECONDS-t0)) s"; grep -A14 "^Every element type" $R/make-dtypes.log
timeout 90 make run-all RESULTS=$R > $R/make-run-all.log 2>&1; echo "run-all rc=$? $((SECONDS-t0)) s"
python3 -m transpose_lab.grader --make-expected $R/run_all.csv > $R/expected.csv 2> $R/expected.name; cat $R/expected.name
slug=$(python3 -m transpose_lab.grader --slug-of $R/run_all.csv); echo "slug $slug"; mkdir -p docs/expected; cp $R/expected.csv docs/expected/$slug.csv
for cfg in "--streams 2 --pieces 4" "--streams 2 --pieces 8" "--streams 3 --pieces 8" "--streams 4 --pieces 16" "--streams 3 --pieces 32"; do
  timeout 30 CUDA.v8_streams/transpose 16384 16384 $cfg --reps 3 --csv $R/v8_sweep.csv > /dev/null 2>&1; echo "v8 $cfg rc=$?"; done
python3 -c "
import csv; [print(r['variant'], r['launch'], r['pct_of_ceiling'], r['median_ms']) for r in csv.DictReader(open('$R/v8_sweep.csv'))]"
echo "v8 $((SECONDS-t0)) s"
for chk in "STEP=CUDA.v4 QUICK=1" "STEP=CUDA.v4 FROM=tests/planted_bugs/unpadded_tile QUICK=1" "STEP=CUDA.v4 FROM=tests/planted_bugs/missing_syncthreads QUICK=1" "STEP=CUDA.v4 FROM=exercises QUICK=1"; do
  [ "$chk" = "STEP=CUDA.v4 FROM=exercises QUICK=1" ] && make exercises > /dev/null 2>&1
  timeout 60 make check $chk > $R/check.log 2>&1; echo "make check $chk rc=$?"; grep -E "FAIL|summary|SUMMARY|passed|failed" $R/check.log | tail -4
done 2>&1 | tee $R/checks.log
echo "checks $((SECONDS-t0)) s"
timeout 60 python3 -m pytest -q -rs tests/test_cuda_steps.py -k "past_2_pow_32 and v7" > $R/test_big.log 2>&1; echo "big rc=$? $((SECONDS-t0)) s"; tail -1 $R/test_big.log

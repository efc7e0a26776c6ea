#!/usr/bin/env bash
# Last H100 call: v9 on one GPU (tests, sanitizer, mpirun -np 1), v8 sanitizer and out of core,
# the grader's expected ranges for the H100.
source "$(dirname "$0")/../device_call.sh"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $R/machine.txt 2>&1
make -j16 all tests-build > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
echo "build $((SECONDS-t0)) s"
timeout 80 python3 -m pytest -q -rs tests/test_multigpu_step.py > $R/test_multigpu.log 2>&1; echo "v9 tests rc=$? $((SECONDS-t0)) s"; tail -3 $R/test_multigpu.log
for c in "memcheck CUDA.v9_multigpu 37 4111 --virtual-ranks 3 --chunks 3 --dtype float16" "racecheck CUDA.v9_multigpu 37 4111 --virtual-ranks 3 --chunks 3 --dtype uint8" "memcheck CUDA.v9_multigpu 1000 999 --gpus 1" "memcheck CUDA.v8_streams 1000 999 --pieces 7 --dtype uint8" "racecheck CUDA.v8_streams 1000 999 --pieces 7"; do
  set -- $c; tool=$1; step=$2; shift 2
  out=$(timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 $step/transpose "$@" --reps 1 2>&1); echo "$tool $step $* rc=$? $(echo "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tr '\n' ' ')"
done 2>&1 | tee $R/sanitizer_v8_v9.log
timeout 30 mpirun --allow-run-as-root -np 1 CUDA.v9_multigpu/transpose 1000 999 --reps 2 --csv $R/v9_mpi.csv > $R/mpirun.log 2>&1; echo "mpirun -np 1 rc=$?"; tail -4 $R/mpirun.log
timeout 60 make run-all RESULTS=$R > $R/make-run-all.log 2>&1; echo "run-all rc=$? $((SECONDS-t0)) s"
python3 -m transpose_lab.grader --make-expected $R/run_all.csv > $R/expected.csv 2> $R/expected.name; cat $R/expected.name


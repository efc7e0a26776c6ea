#!/usr/bin/env bash
# Second session, H100: the new code checked before it is measured. Build everything, then at
# once: the GPU tests of the kernel steps (v7's rewritten unaligned path, CUDA.copy, v2's
# variants), of v8 and v9; then compute-sanitizer on every new path, v9's memcheck logged whole;
# v7 against v6 on the odd and thin shapes for every type; ncu of v2's two variants.
source "$(dirname "$0")/../device_call.sh"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nvcc --version | tail -1; } > $R/machine.txt 2>&1
make -k -j16 all tests-build > $R/build.log 2>&1 || { grep -B2 -A8 -E "error" $R/build.log | head -40; }
echo "build $((SECONDS-t0)) s"
P="python3 -m pytest -q -rs -p no:cacheprovider"
( timeout 330 $P tests/test_cuda_steps.py -k "not past_2_pow" > $R/test_cuda_steps.log 2>&1; echo "test_cuda_steps rc=$?" > $R/rc_cuda ) &
( timeout 330 $P tests/test_streams_step.py tests/test_multigpu_step.py -k "not past_2_pow" > $R/test_v8_v9.log 2>&1; echo "test_v8_v9 rc=$?" > $R/rc_v8v9 ) &
# Sanitizers, meanwhile (small shapes, little GPU time).
{
for c in "memcheck CUDA.v7_packed 67 45" "racecheck CUDA.v7_packed 67 45" "memcheck CUDA.v7_packed 37 4111" "racecheck CUDA.v7_packed 37 4111" "memcheck CUDA.v7_packed 1025 513" "memcheck CUDA.v7_packed 1 1" "memcheck CUDA.v7_packed 17 33" "racecheck CUDA.v7_packed 17 33" "memcheck CUDA.v7_packed 1 400000" \
         "memcheck CUDA.copy 67 45" "racecheck CUDA.copy 67 45" \
         "memcheck CUDA.v2 67 45 --variant all" "racecheck CUDA.v2 67 45 --variant all" \
         "memcheck CUDA.v8_streams 1000 999 --pieces 7" "racecheck CUDA.v8_streams 1000 999 --pieces 7" "memcheck CUDA.v8_streams 1000 999 --pieces 7 --down copy-engine"; do
  set -- $c; tool=$1; step=$2; shift 2
  for d in uint8 float16 float32 float64 complex128; do
    out=$(timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $step/transpose "$@" --dtype $d --reps 1 2>&1); echo "$tool $step $* $d rc=$? $(echo "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tr '\n' ' ')"
  done
done
timeout 90 compute-sanitizer --tool memcheck CUDA.v9_multigpu/transpose 1000 999 --gpus 1 --reps 1 > $R/v9_memcheck_gpus1.log 2>&1; echo "memcheck v9 --gpus 1 rc=$?"
timeout 90 compute-sanitizer --tool memcheck --report-api-errors no CUDA.v9_multigpu/transpose 1000 999 --gpus 1 --reps 1 > $R/v9_memcheck_gpus1_noapi.log 2>&1; echo "memcheck v9 --gpus 1 --report-api-errors no rc=$? $(grep 'ERROR SUMMARY' $R/v9_memcheck_gpus1_noapi.log)"
} > $R/sanitizer.log 2>&1
echo "sanitizers $((SECONDS-t0)) s"; grep -v "rc=0" $R/sanitizer.log | head -20
wait
cat $R/rc_cuda $R/rc_v8v9; tail -1 $R/test_cuda_steps.log $R/test_v8_v9.log
grep -E "^(FAILED|ERROR)" $R/test_cuda_steps.log $R/test_v8_v9.log | head -20
echo "tests $((SECONDS-t0)) s"
# v7 against v6 where the shapes are not 16-byte aligned, and on the thin shapes, every type.
for d in uint8 float16 bfloat16 float32 float64 complex64 complex128; do for s in "8191 8193" "8192 8193" "8191 8192" "1024 65536" "65536 1024"; do for st in CUDA.v6_locality CUDA.v7_packed; do
  timeout 30 $st/transpose $s --dtype $d --reps 10 --csv $R/v7_shapes.csv > /dev/null 2>&1 || echo "FAILED $st $s $d"; done; done; done
python3 -c "
import csv
r=list(csv.DictReader(open('$R/v7_shapes.csv')))
for x in r: print(x['step'][:8], x['rows'], x['cols'], x['dtype'], x['pct_of_ceiling'])" | paste - - | awk '{print \$2,\$3,\$4,\"v6\",\$5,\"v7\",\$10}'
echo "v7 shapes $((SECONDS-t0)) s"
M=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum
for v in read-coalesced write-coalesced; do
  timeout 60 ncu --profile-from-start off --metrics $M --csv CUDA.v2/transpose 4096 4096 --variant $v --reps 1 > $R/ncu_v2_$v.csv 2> $R/ncu_v2_$v.err; echo "ncu v2 $v rc=$?"
done
echo "done $((SECONDS-t0)) s"

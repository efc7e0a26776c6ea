#!/usr/bin/env bash
# Second session's measuring calls, one per GPU model: tools/chapter2_runs/measure.sh SECTION...
# Sections, in the order given: build runall v8 ooc v9 course bench ncu. Each writes under /tmp/r
# (tarred to $OUT/r.tgz at the end) and prints a few lines; a section that would pass the time
# left is skipped and says so.
source "$(dirname "$0")/../device_call.sh"
export OMP_PROC_BIND=close OMP_PLACES=cores

build() {
  { nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv
    lscpu | grep -E "Model name|^CPU\(s\)"; nvcc --version | tail -1; git log -1 --format=%h 2>/dev/null; } > $R/machine.txt 2>&1
  make -j16 all tests-build > $R/build.log 2>&1 || { grep -B2 -A8 error $R/build.log | head -30; exit 1; }
}
runall() {
  timeout 150 make run-all RESULTS=$R > $R/make-run-all.log 2>&1; echo "run-all rc=$?"
  grep -E "^(CPU|CUDA)" $R/make-run-all.log | head -30
  python3 -m transpose_lab.grader --make-expected $R/run_all.csv > $R/expected.csv 2> $R/expected.name; cat $R/expected.name
}
v8() {
  local V8=CUDA.v8_streams/transpose
  for a in "16384 16384" "16384 16384 --down copy-engine" "8192 8192 --dtype float64" \
           "8192 8192 --dtype float64 --down copy-engine" "8192 8192 --dtype uint8" "8191 8193 --dtype float16"; do
    timeout 60 $V8 $a --csv $R/v8.csv > $R/v8_last.log 2>&1; echo "v8 $a rc=$? $(grep -E '^  (pipeline|copy-engine-down|serial) ' $R/v8_last.log | awk '{printf "%s %s ms %s; ", $1, $(NF-4), $(NF-2)}')"
  done
  timeout 90 $V8 16384 16384 --host-memory pageable --reps 3 --csv $R/v8.csv > $R/v8_pageable.log 2>&1; echo "v8 pageable rc=$? $(grep -E '^  pageable' $R/v8_pageable.log | awk '{print $(NF-4), $(NF-2)}')"
  timeout 60 $V8 16384 16384 --timeline $R/v8_timeline_16k_f32.csv --reps 3 > $R/v8_timeline.log 2>&1; echo "timeline rc=$?"
  for a in "16384 16384" "8192 8192 --dtype float64"; do
    timeout 60 CPU.omp/transpose $a --variant blocked --reps 5 --csv $R/v8_cpu.csv > /dev/null 2>&1; echo "CPU.omp blocked $a rc=$?"; done
}
ooc() {
  timeout 240 CUDA.v8_streams/transpose 65536 131072 --device-mem 2147483648 --reps 3 --csv $R/v8_out_of_core.csv > $R/v8_out_of_core.log 2>&1
  echo "out of core rc=$?"; grep -E "^  (pipeline|serial|check|         )|pieces|H2D" $R/v8_out_of_core.log | head -12
}
v9() {
  for n in 8192 16384; do
    timeout 60 CUDA.v9_multigpu/transpose $n $n --gpus 1 --csv $R/v9_one_gpu.csv > /dev/null 2>&1; echo "v9 --gpus 1 $n rc=$?"
    timeout 60 CUDA.v7_packed/transpose $n $n --csv $R/v9_one_gpu.csv > /dev/null 2>&1; echo "v7 $n rc=$?"
  done
  timeout 60 mpirun --allow-run-as-root -np 1 CUDA.v9_multigpu/transpose 1000 999 --reps 2 --csv $R/v9_mpi.csv > $R/mpirun.log 2>&1; echo "mpirun -np 1 rc=$?"
}
course() {
  make exercises > /dev/null 2>&1
  # Exercises and planted bugs fail on correctness or the sanitizer (no speed measured): at once.
  { for s in CPU.omp CUDA.v1 CUDA.v2 CUDA.v3 CUDA.v4 CUDA.v5_unroll CUDA.v6_locality CUDA.v7_packed; do echo "$s exercises"; done
    for b in missing_syncthreads:CUDA.v4 bounds_off_by_one:CUDA.v4 swapped_indices:CUDA.v2; do echo "${b#*:} tests/planted_bugs/${b%%:*}"; done; } |
  xargs -P 6 -L 1 sh -c 'f=$(echo "$0_$1" | tr "/." "__"); timeout 200 python3 -m transpose_lab.grader $0 --from $1 --quick --cuda-arch 90 > '$R'/check_$f.log 2>&1; echo "make check STEP=$0 FROM=$1 QUICK=1 rc=$? | $(tail -1 '$R'/check_$f.log)"' | tee $R/course-checks.log
  # Speed is graded alone: the solutions, then the unpadded tile, then the 32-bit index past 2^31.
  for s in CPU.omp CUDA.v1 CUDA.v2 CUDA.v3 CUDA.v4 CUDA.v5_unroll CUDA.v6_locality CUDA.v7_packed; do
    timeout 120 python3 -m transpose_lab.grader $s --quick > $R/check_$s.log 2>&1; echo "make check STEP=$s QUICK=1 rc=$? | $(tail -1 $R/check_$s.log)"; done | tee -a $R/course-checks.log
  timeout 120 python3 -m transpose_lab.grader CUDA.v4 --from tests/planted_bugs/unpadded_tile --quick --cuda-arch 90 > $R/check_unpadded.log 2>&1; echo "make check STEP=CUDA.v4 FROM=tests/planted_bugs/unpadded_tile QUICK=1 rc=$? | $(grep -E '^FAIL' $R/check_unpadded.log | head -2 | tr '\n' ' ') $(tail -1 $R/check_unpadded.log)" | tee -a $R/course-checks.log
  if [ $(left) -gt 150 ]; then
  timeout 140 python3 -m transpose_lab.grader CUDA.v4 --from tests/planted_bugs/index_overflow_32bit --cuda-arch 90 > $R/check_overflow.log 2>&1; echo "make check STEP=CUDA.v4 FROM=tests/planted_bugs/index_overflow_32bit rc=$? | $(grep -E '^FAIL' $R/check_overflow.log | head -2 | tr '\n' ' ') $(tail -1 $R/check_overflow.log)" | tee -a $R/course-checks.log
  fi
}
bench() {
  for d in $TYPES; do for s in "8192 8192" "16384 16384" "8191 8193" "1024 65536" "65536 1024"; do
    for st in CUDA.v7_packed CUDA.cublaslt CUDA.cublas; do
      [ $(left) -lt 20 ] && { echo "bench: out of time at $d $s"; return; }
      timeout 30 $st/transpose $s --dtype $d --reps 10 --csv $R/bench_types.csv > /dev/null 2>$R/bench_err.log || grep -q "does not support" $R/bench_err.log || echo "FAILED $st $s $d: $(tail -1 $R/bench_err.log)"
    done; done; done
}
run_ncu() {  # not ncu(): that would hide the ncu command
  M=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
  for d in $TYPES; do for st in CUDA.v6_locality CUDA.v7_packed; do
    [ $(left) -lt 15 ] && { echo "ncu: out of time"; return; }
    timeout 40 ncu --profile-from-start off --metrics $M --csv $st/transpose 4096 4096 --dtype $d --reps 1 > $R/ncu_${st}_$d.csv 2>/dev/null; echo "ncu $st $d rc=$?"
  done; done
  for v in read-coalesced write-coalesced; do
    timeout 40 ncu --profile-from-start off --metrics $M,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum --csv CUDA.v2/transpose 4096 4096 --variant $v --reps 1 > $R/ncu_v2_$v.csv 2>/dev/null; echo "ncu v2 $v rc=$?"
  done
}
gputests() {  # the kernel-step tests the first H100 call of this session ran out of time for
  timeout 120 python3 -m pytest -q -rs -p no:cacheprovider tests/test_cuda_steps.py -k "variant or copy" > $R/test_variants_copy.log 2>&1; echo "tests rc=$?"; tail -1 $R/test_variants_copy.log
}
run_sections "$@"

#!/usr/bin/env bash
# Fifth session's device calls: tools/session5/measure.sh SECTION... (run from the repository root).
# Sections run in the order given; each writes under /tmp/r (tarred to $OUT/r.tgz at the end) and
# prints a few lines; one that would pass the time left (LIMIT, seconds) is skipped and says so.
#   build      make the steps the later sections need, machine.txt (GPUs, NVLink topology)
#   mgtests    tests/test_multigpu_step.py (the tests for 2 or more GPUs run where they are)
#   mgsmall    make multigpu at 8192^2 and 32768^2 (float32, complex128) and 65536^2 float32
#   mgbig      make multigpu at 65536^2 complex128 (64 GiB a matrix)
#   mgdiag     v9 on 2 GPUs at 32768^2 float32: --chunks 1, 4, 16, 64 x --place kernel, copy-engine
#              (what the exchange waits for), and an nsys kernel summary where nsys is installed
#   mgsweep    v9 on 2 GPUs at SWEEP_CASES (32768:float32) over --chunks SWEEP_CHUNKS (1 4 16),
#              with NCCL's kernels and with NCCL_P2P_USE_CUDA_MEMCPY=1 (the copy engines move the
#              exchange, so it leaves the SMs to the local work)
#   tiletests  the tests of CUDA.v8_streams' tiles (--piece-cols), eight at once
#   tileprobe  CUDA.v8_streams through 2 GiB of device memory, whole-row bands against tiles:
#              32768^2 float32 (--piece-cols 1, 4, 16) and 65536^2 float32 (1, 16)
#   mgtwo      make multigpu MULTIGPU_GPUS=2 at 8192^2, 32768^2 (float32, complex128), 65536^2
#              float32, then 65536^2 complex128: the 2-GPU rows of the code as it is now
source "$(dirname "$0")/../device_call.sh"
export OMP_PROC_BIND=close OMP_PLACES=cores
BUILD_STEPS=${BUILD_STEPS:-"CUDA.v1 CUDA.v7_packed CUDA.v9_multigpu"}

build() {
  { nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv
    nvidia-smi topo -m; lscpu | grep -E "Model name|^CPU\(s\)|NUMA"; nvcc --version | tail -1
    free -g | head -2; mpirun --version 2>&1 | head -1; } > $R/machine.txt 2>&1
  make -j32 $BUILD_STEPS > $R/build.log 2>&1 || { grep -B2 -A8 error $R/build.log | head -30; exit 1; }
  echo "built: $BUILD_STEPS"; head -3 $R/machine.txt
}
mgtests() {
  timeout $(( $(left) - 10 )) python3 -m pytest -q -rs -n 8 tests/test_multigpu_step.py > $R/test_multigpu.log 2>&1
  echo "mgtests rc=$?"; tail -3 $R/test_multigpu.log; grep -c SKIPPED $R/test_multigpu.log
}
mg_report() { python3 -m transpose_lab.plot_multigpu --csv $R/mg/multigpu.csv --out $R/mg/multigpu.png --table - 2>&1 | tail -30; }
mgsmall() {
  timeout $(( $(left) - 10 )) make multigpu RESULTS=$R/mg MULTIGPU_SIZES="8192 32768" MULTIGPU_DTYPES="float32 complex128" > $R/mgsmall.log 2>&1
  echo "mgsmall rc=$?"; grep -E "FAILED|skipped" $R/mgsmall.log | head
  timeout $(( $(left) - 10 )) make multigpu RESULTS=$R/mg MULTIGPU_SIZES=65536 MULTIGPU_DTYPES=float32 REPS=20 > $R/mg65536f32.log 2>&1
  echo "mg 65536 float32 rc=$?"; grep -E "FAILED|skipped" $R/mg65536f32.log | head
  mg_report
}
mgbig() {
  timeout $(( $(left) - 10 )) make multigpu RESULTS=$R/mg MULTIGPU_SIZES=65536 MULTIGPU_DTYPES=complex128 REPS=20 > $R/mgbig.log 2>&1
  echo "mgbig rc=$?"; cat $R/mgbig.log | grep -v "^python\|^make" | head -20
  mg_report
}
mgdiag() {
  for place in kernel copy-engine; do for chunks in 1 4 16 64; do
    timeout 100 CUDA.v9_multigpu/transpose 32768 32768 --gpus 2 --chunks $chunks --place $place --reps 10 --csv $R/mgdiag.csv > $R/mgdiag_last.log 2>&1
    echo "place $place chunks $chunks rc=$? $(grep -E '^  gpus=2' $R/mgdiag_last.log | awk '{print $(NF-4), "ms", $(NF-2)}') | $(grep -E '^  all-to-all' $R/mgdiag_last.log | awk '{print $(NF-4), "ms"}')"
  done; done
  if command -v nsys > /dev/null; then
    timeout 120 nsys profile -t cuda -o $R/v9_nsys --force-overwrite true CUDA.v9_multigpu/transpose 32768 32768 --gpus 2 --reps 3 > $R/nsys_run.log 2>&1
    timeout 60 nsys stats -r cuda_gpu_kern_sum,cuda_gpu_mem_time_sum $R/v9_nsys.nsys-rep > $R/nsys_stats.txt 2>&1
    echo "nsys rc=$?"; grep -E "Time \(%\)|nccl|transpose|copy_band|Memcpy" $R/nsys_stats.txt | cut -c1-160 | head -12
  else echo "nsys: not installed"; fi
}
mgsweep() {
  for c in ${SWEEP_CASES:-"32768:float32"}; do set -- ${c/:/ }
    for engine in sm ce; do for chunks in ${SWEEP_CHUNKS:-1 4 16}; do
      local env=(); [ $engine = ce ] && env=(env NCCL_P2P_USE_CUDA_MEMCPY=1)
      timeout 100 "${env[@]}" CUDA.v9_multigpu/transpose $1 $1 --dtype $2 --gpus 2 --chunks $chunks --reps 10 > $R/mgsweep_last.log 2>&1
      local rc=$?; cat $R/mgsweep_last.log >> $R/mgsweep_${1}_$2_$engine.log
      echo "$1^2 $2 exchange by $engine chunks $chunks rc=$rc $(grep -E '^  gpus=2' $R/mgsweep_last.log | awk '{print $(NF-4), "ms", $(NF-2)}') | a2a $(grep -E '^  all-to-all' $R/mgsweep_last.log | awk '{print $(NF-4)}') ms"
    done; done
  done
}
tiletests() {
  timeout 150 python3 -m pytest -q -n 8 tests/test_streams_step.py -k "tiles or plan or bad_input" > $R/test_tiles.log 2>&1
  echo "tiletests rc=$?"; tail -2 $R/test_tiles.log
}
tileprobe() {
  for c in "32768 1" "32768 4" "32768 16" "65536 16" "65536 1"; do set -- $c
    [ $(left) -lt 100 ] && { echo "tileprobe $1 M=$2 skipped: $(left) s left"; continue; }
    timeout $(( $(left) - 10 )) CUDA.v8_streams/transpose $1 $1 --reps 3 --device-mem 2147483648 --piece-cols $2 --csv $R/tileprobe.csv > $R/tileprobe_${1}_$2.log 2>&1
    echo "${1}^2 f32 2 GiB piece-cols $2 rc=$? $(grep -E '^  pieces' $R/tileprobe_${1}_$2.log | cut -c1-90)"
    grep -E '^  (pipeline|copy|serial)' $R/tileprobe_${1}_$2.log | awk '{print "   ", $1, $(NF-4), "ms", $(NF-2)}'
  done
}
mgtwo() {
  timeout $(( $(left) - 10 )) make multigpu RESULTS=$R/mg2 MULTIGPU_GPUS=2 MULTIGPU_SIZES="8192 32768" MULTIGPU_DTYPES="float32 complex128" > $R/mgtwo.log 2>&1
  echo "mgtwo rc=$?"; grep -E "FAILED|skipped" $R/mgtwo.log | head
  timeout $(( $(left) - 10 )) make multigpu RESULTS=$R/mg2 MULTIGPU_GPUS=2 MULTIGPU_SIZES=65536 MULTIGPU_DTYPES=float32 REPS=20 > $R/mgtwo65536f32.log 2>&1
  echo "mgtwo 65536 float32 rc=$?"; grep -E "FAILED|skipped" $R/mgtwo65536f32.log | head
  python3 -m transpose_lab.plot_multigpu --csv $R/mg2/multigpu.csv --out $R/mg2/multigpu.png --table - 2>&1 | tail -30
  timeout $(( $(left) - 10 )) make multigpu RESULTS=$R/mg2 MULTIGPU_GPUS="1 2" MULTIGPU_SIZES=65536 MULTIGPU_DTYPES=complex128 REPS=10 > $R/mgtwo65536c128.log 2>&1
  echo "mgtwo 65536 complex128 rc=$?"; grep -E "FAILED|skipped" $R/mgtwo65536c128.log | head
  python3 -m transpose_lab.plot_multigpu --csv $R/mg2/multigpu.csv --out $R/mg2/multigpu.png --table - 2>&1 | grep 65536
}
run_sections "$@"

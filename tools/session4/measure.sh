#!/usr/bin/env bash
# Fourth session's device calls: tools/session4/measure.sh SECTION... (run from the repository root).
# Sections run in the order given; each writes under /tmp/r (tarred to $OUT/r.tgz at the end) and
# prints a few lines; one that would pass the time left (LIMIT, seconds) is skipped and says so.
#   build      make all tests-build, machine.txt (with the NUMA layout)
#   ncu7       Nsight Compute of v7 at 8191 x 8193 (uint8, float16: the realigning kernel) and at
#              8192 x 8192 uint8 (the packed kernel), v6 at 8191 x 8193 uint8: launch, occupancy,
#              memory, warp stalls, scheduler, instructions
#   c128       make probes PROBES=v7_elements_for_16_byte, complex128, on the four aligned shapes
#   v8auto     CUDA.v8_streams' default way down against both explicit ways, on narrow words
#   oocprobe   CUDA.v8_streams at 16384^2 float32 over 32, 64, 128 pieces, and at 32768^2 and
#              65536^2 through 2 GiB of device memory: what takes the out-of-core run below 85%
#   cpudtypes  make dtypes DTYPES_STEPS=CPU.omp (both variants, every type, 8192^2, the host CPU)
#   cpuprobe   CPU.omp blocked on the host CPU, 8192^2, 16 threads, 3 processes each: as it is, with
#              LAB_STREAMING_STORES=off, and two builds with smaller bands for 1- and 2-byte elements
#              (64 bytes of each output row when streaming; 128 with plain stores)
#   sanitize   make sanitize (v7 and v8, every type, memcheck and racecheck)
#   tests      the whole test suite, its files in four pytest processes at once (GPU tests run)
#   checks     tests and sanitize at once (independent programs sharing the GPU)
#   resttests  the tests call 2 left unrun (tools/session4/rest_*.txt), two processes at once
#   restcourse the course tests of rest_course.txt again, six at once (pytest-xdist)
#   bench      make bench for every type (BENCH_TYPES to choose; v7 against the fastest library)
source "$(dirname "$0")/../device_call.sh"
export OMP_PROC_BIND=close OMP_PLACES=cores

build() {
  { nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv
    lscpu | grep -E "Model name|^CPU\(s\)|NUMA"; nvcc --version | tail -1; free -g | head -2
    numactl -H 2>/dev/null | head -4; } > $R/machine.txt 2>&1
  make -j16 all tests-build > $R/build.log 2>&1 || { grep -B2 -A8 error $R/build.log | head -30; exit 1; }
  echo "built"
}
NCU_SECTIONS="--section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis
  --section WarpStateStats --section SchedulerStats --section InstructionStats"
ncu7() {
  local cases=("CUDA.v7_packed 8191 8193 uint8" "CUDA.v7_packed 8191 8193 float16"
               "CUDA.v7_packed 8192 8192 uint8" "CUDA.v6_locality 8191 8193 uint8")
  for c in "${cases[@]}"; do
    set -- $c; local name=$(basename $1)_$2x$3_$4
    timeout 120 ncu --profile-from-start off $NCU_SECTIONS $1/transpose $2 $3 --dtype $4 --reps 1 > $R/ncu_$name.txt 2>&1
    echo "-- $name rc=$?"
    grep -E "^  [a-z_]+kernel|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Issued Warp|No Eligible|Warp Cycles Per Issued|Block Limit Reg|Block Limit Shared|L1/TEX Hit|Mem Busy|Max Bandwidth|Executed Ipc A" $R/ncu_$name.txt | head -24
    grep -E "Est. Speedup|stall" $R/ncu_$name.txt | head -6
  done
}
c128() {
  for shape in 8192x8192 16384x16384 1024x65536 65536x1024; do
    timeout 90 make probes RESULTS=$R/c128_$shape PROBES=v7_elements_for_16_byte PROBE_DTYPES=complex128 PROBE_SHAPE=$shape REPS=20 > $R/c128_$shape.log 2>&1
    echo "c128 $shape rc=$?"
    python3 - $R/c128_$shape/probes.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(f"  {r['step']:26} {r['variant']:10} {r['dtype']:10} {float(r['median_ms']):8.4f} ms {float(r['pct_of_ceiling']):5.1f}% {r['verified']}")
PY
  done
}
v8auto() {
  for c in "8191 8193 float16" "8192 8192 uint8" "8191 8193 float32"; do set -- $c
    for down in "" "--down kernel" "--down copy-engine"; do
      timeout 60 CUDA.v8_streams/transpose $1 $2 --dtype $3 --reps 5 $down --csv $R/v8auto.csv > $R/v8auto_last.log 2>&1
      echo "v8 $1x$2 $3 [${down:-default}] rc=$? $(grep -E '^  down' $R/v8auto_last.log | head -1 | cut -c1-70) | $(grep -E '^  pipeline' $R/v8auto_last.log | awk '{print $(NF-4), "ms", $(NF-2)}')"
    done
  done
}
oocprobe() {
  for p in 32 64 128; do
    timeout 60 CUDA.v8_streams/transpose 16384 16384 --reps 5 --pieces $p --csv $R/oocprobe.csv > $R/oocprobe_last.log 2>&1
    echo "16384^2 f32 pieces $p rc=$? $(grep -E '^  pipeline' $R/oocprobe_last.log | awk '{print $(NF-4), "ms", $(NF-2)}')"
  done
  for n in 32768 65536; do
    timeout 150 CUDA.v8_streams/transpose $n $n --reps 3 --device-mem 2147483648 --csv $R/oocprobe.csv > $R/oocprobe_$n.log 2>&1
    echo "${n}^2 f32 2 GiB rc=$?"; grep -E '^  pieces' $R/oocprobe_$n.log; grep -E '^  (pipeline|copy|serial)' $R/oocprobe_$n.log | awk '{print $1, $(NF-4), "ms", $(NF-2)}'
  done
}
cpudtypes() {
  timeout $(( $(left) - 5 )) make dtypes DTYPES_STEPS=CPU.omp RESULTS=$R/cpu REPS=10 > $R/make-dtypes-cpu.log 2>&1; echo "cpu dtypes rc=$?"
  python3 - $R/cpu/dtypes.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["step"] == "CPU.omp": print(f"  {r['variant']:8} {r['dtype']:10} {float(r['median_ms']):8.3f} ms {float(r['pct_of_ceiling']):5.1f}%")
PY
}
cpuprobe() {
  local base=CPU.omp/transpose.cpp
  local line='      std::max<int>(kBlockRows, ::kBandRows * sizeof(float) / sizeof(T));'
  grep -qxF "$line" $base || { echo "cpuprobe: the band line is not in $base"; return; }
  for p in band64 plain128; do rm -rf /tmp/$p; mkdir -p /tmp/$p; cp CPU.omp/Makefile $base /tmp/$p/; done
  sed -i 's/::kBandRows \* sizeof(float) \/ sizeof(T));/(kSmall ? 16 : ::kBandRows) * sizeof(float) \/ sizeof(T));/' /tmp/band64/transpose.cpp
  sed -i 's/^constexpr int kPlainSmallBandBytes = 256;/constexpr int kPlainSmallBandBytes = 128;/' /tmp/plain128/transpose.cpp
  echo "edits: $(grep -c 'kSmall ? 16 : ::kBandRows' /tmp/band64/transpose.cpp) $(grep -c 'kPlainSmallBandBytes = 128;' /tmp/plain128/transpose.cpp)"
  for p in band64 plain128; do
    sed -i "s#\.\./common#$PWD/common#g" /tmp/$p/Makefile /tmp/$p/transpose.cpp
    make -C /tmp/$p > $R/cpuprobe_build_$p.log 2>&1 || { echo "cpuprobe: $p does not build"; tail -5 $R/cpuprobe_build_$p.log; }
  done
  for d in uint8 float16 float32 float64; do for k in 1 2 3; do
    OMP_NUM_THREADS=16 CPU.omp/transpose 8192 8192 --variant blocked --dtype $d --reps 20 --csv $R/cpuprobe_base.csv > /dev/null 2>&1
    OMP_NUM_THREADS=16 LAB_STREAMING_STORES=off CPU.omp/transpose 8192 8192 --variant blocked --dtype $d --reps 20 --csv $R/cpuprobe_plain.csv > /dev/null 2>&1
    for p in band64 plain128; do [ -x /tmp/$p/transpose ] || continue
      local env=""; [ $p = plain128 ] && env="LAB_STREAMING_STORES=off"
      env OMP_NUM_THREADS=16 $env /tmp/$p/transpose 8192 8192 --variant blocked --dtype $d --reps 20 --csv $R/cpuprobe_$p.csv > /dev/null 2>&1
    done
  done; done
  OMP_NUM_THREADS=8 CPU.omp/transpose 8192 8192 --variant blocked --dtype uint8 --reps 20 --csv $R/cpuprobe_8threads.csv > /dev/null 2>&1
  python3 - $R <<'PY'
import csv, glob, os, statistics, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "cpuprobe_*.csv"))):
    rows = list(csv.DictReader(open(path)))
    by = {}
    for r in rows: by.setdefault(r["dtype"], []).append(r)
    for d, rs in by.items():
        ms = [float(r["median_ms"]) for r in rs]; pct = [float(r["pct_of_ceiling"]) for r in rs]
        print(f"  {os.path.basename(path)[9:-4]:9} {d:8} ms {' '.join(f'{m:7.3f}' for m in ms)}  % {' '.join(f'{p:5.1f}' for p in pct)} {rs[0]['launch'][:40]}")
PY
}
sanitize() {
  timeout $(( $(left) - 5 )) make sanitize RESULTS=$R > $R/make-sanitize.log 2>&1; echo "sanitize rc=$?"
  grep -v "^PASS" $R/make-sanitize.log | tail -8
}
tests() {
  # The suite's files in four groups, each its own pytest process, all at once: the GPU tests are
  # independent programs; the large ones (past 2^31 and 2^32 elements) sit in one group.
  local groups=("tests/test_cuda_steps.py" "tests/test_course.py tests/test_reference_rows.py"
                "tests/test_streams_step.py tests/test_multigpu_step.py tests/test_ncu_profile.py"
                "$(ls tests/test_*.py | grep -vE 'cuda_steps|course|reference_rows|streams_step|multigpu_step|ncu_profile' | tr '\n' ' ')")
  local i=0
  for g in "${groups[@]}"; do i=$((i + 1))
    timeout $(( $(left) - 10 )) python3 -m pytest -rs -p no:cacheprovider $g > $R/test_group$i.log 2>&1 &
  done
  wait
  for i in 1 2 3 4; do echo "group $i: $(tail -n 1 $R/test_group$i.log)"; grep -E "^(FAILED|ERROR)" $R/test_group$i.log | head -5; done
}
checks() {
  sanitize > $R/sanitize_section.log 2>&1 &
  tests
  wait
  cat $R/sanitize_section.log
}
# The tests the call before this one's time limit left unrun (their ids, in collection order, in
# tools/session4/rest_*.txt), with pytest-xdist where it is installed.
resttests() {
  local n4="" n3=""; python3 -c "import xdist" 2>/dev/null && n4="-n 4" n3="-n 3"
  timeout $(( $(left) - 60 )) python3 -m pytest -rs -p no:cacheprovider $n4 $(cat tools/session4/rest_cuda.txt) > $R/test_rest_cuda.log 2>&1 &
  timeout $(( $(left) - 60 )) python3 -m pytest -rs -p no:cacheprovider $n3 $(cat tools/session4/rest_course.txt) tests/test_reference_rows.py > $R/test_rest_course.log 2>&1 &
  wait
  for f in cuda course; do echo "rest $f: $(tail -n 1 $R/test_rest_$f.log)"; grep -E "^(FAILED|ERROR)" $R/test_rest_$f.log | head -5; done
}
restcourse() {
  local n=""; python3 -c "import xdist" 2>/dev/null && n="-n 6"
  timeout $(( $(left) - 10 )) python3 -m pytest -rs -v -p no:cacheprovider $n --durations=8 $(cat tools/session4/rest_course.txt) > $R/test_rest_course2.log 2>&1
  echo "rest course: $(tail -n 1 $R/test_rest_course2.log)"; grep -E "^(FAILED|ERROR)" $R/test_rest_course2.log | head -5
}
bench() {
  timeout $(( $(left) - 5 )) make bench RESULTS=$R BENCH_DTYPES="${BENCH_TYPES:-$TYPES}" REPS=10 > $R/make-bench.log 2>&1; echo "bench rc=$?"
  sed -n '/^dtype /,$p' $R/make-bench.log
}
run_sections "$@"

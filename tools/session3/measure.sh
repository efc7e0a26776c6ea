#!/usr/bin/env bash
# Third session's device calls: tools/session3/measure.sh SECTION... (run from the repository root).
# Sections run in the order given; each writes under /tmp/r (tarred to $OUT/r.tgz at the end) and
# prints a few lines; one that would pass the time left (LIMIT, seconds) is skipped and says so.
#   build       make all tests-build, machine.txt
#   v2          v2's two variants at 8192^2 and both under compute-sanitizer (variants.cu moved)
#   v7probe     v7 against two probes at 8191 x 8193, every type: v7r (the realigned kernel also
#               for 4- and 8-byte elements) and v7b (the realigned kernel at 3 blocks an SM)
#   v7probe2    v7 against three more probes at 8191 x 8193: v7t (v6's kernel with 32 x 32 tiles for
#               8-byte elements), v7h (its blocks 32 x 16), v7q (the realigned kernel at 4 blocks an
#               SM for 2-byte elements)
#   san8        compute-sanitizer memcheck and racecheck of v7 for 8-byte and 2-byte elements on odd
#               shapes (the two kernels changed this session)
#   bench       make bench for every type (v7 against the fastest library, 5 shapes)
#   sweep       make streams-sweep (--streams 3 4, --down-blocks 8 12 16 24 32)
#   streams     make streams
#   ooc         make out-of-core
#   planted     pytest tests/test_course.py -k planted (every planted bug, index overflow included)
#   quickbuild  make all (no tests)
#   cpudtypes   make dtypes DTYPES_STEPS=CPU.omp (both variants, every type, 8192^2, the Xeon host)
#   narrow      make streams STREAMS_CASES="8192x8192:uint8 8191x8193:float16"
#   multigpu    make multigpu (one GPU here: --gpus 1 against v7)
#   gputests    pytest of the kernel-step tests of v2's variants and CUDA.copy
source "$(dirname "$0")/../device_call.sh"
export OMP_PROC_BIND=close OMP_PLACES=cores

build() {
  { nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv
    lscpu | grep -E "Model name|^CPU\(s\)"; nvcc --version | tail -1; free -g | head -2; } > $R/machine.txt 2>&1
  make -j16 all tests-build > $R/build.log 2>&1 || { grep -B2 -A8 error $R/build.log | head -30; exit 1; }
  echo "built"
}
v2() {
  timeout 60 CUDA.v2/transpose 8192 8192 --variant all --csv $R/v2_variants.csv > $R/v2.log 2>&1; echo "v2 rc=$?"
  grep -E "coalesced" $R/v2.log | head -4
  for v in read-coalesced write-coalesced; do for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 CUDA.v2/transpose 67 45 --variant $v --reps 1 > $R/v2_san_${v}_$tool.log 2>&1
    echo "sanitizer $tool v2 $v rc=$? $(grep -E 'ERROR SUMMARY' $R/v2_san_${v}_$tool.log)"; done; done
}
v7probe() {
  for probe in v7r v7b; do
    rm -rf CUDA.$probe; cp -r CUDA.v7_packed CUDA.$probe; rm -rf CUDA.$probe/.build CUDA.$probe/transpose
  done
  sed -i 's/  if constexpr (sizeof(T) >= 4)$/  if constexpr (sizeof(T) >= 16)/' CUDA.v7r/transpose.cu
  sed -i 's/__launch_bounds__(CHUNKS\* kGroups, 2)/__launch_bounds__(CHUNKS* kGroups, 3)/' CUDA.v7b/transpose.cu
  grep -c "sizeof(T) >= 16)" CUDA.v7r/transpose.cu; grep -c "kGroups, 3)" CUDA.v7b/transpose.cu
  (make -C CUDA.v7r -j8 > $R/v7r_build.log 2>&1 & make -C CUDA.v7b -j8 > $R/v7b_build.log 2>&1; wait) || true
  for d in $TYPES; do for st in CUDA.v7_packed CUDA.v7r CUDA.v7b CUDA.cublas; do
    [ $(left) -lt 20 ] && { echo "v7probe: out of time at $d"; return; }
    timeout 30 $st/transpose 8191 8193 --dtype $d --reps 20 --csv $R/v7probe.csv > $R/probe_last.log 2>&1
    rc=$?; [ $rc -ne 0 ] && [ $rc -ne 2 ] && echo "FAILED $st $d rc=$rc: $(tail -2 $R/probe_last.log)"
  done; done
  python3 - $R/v7probe.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    print(f"{r['step']:16} {r['dtype']:10} {float(r['median_ms']):8.4f} ms {float(r['pct_of_ceiling']):5.1f}% {r['verified']}")
PY
  for st in CUDA.v7r CUDA.v7b; do for d in float32 float64 complex64 uint8; do for s in "67 45" "37 4111" "1 400000"; do
    timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $st/transpose $s --dtype $d --reps 1 > $R/probe_san.log 2>&1
    rc=$?; [ $rc -ne 0 ] && echo "sanitizer FAILED $st $d $s rc=$rc $(grep -m1 ERROR $R/probe_san.log)"
  done; done; done; echo "probe sanitizers done"
}
v7probe2() {
  for probe in v7t v7h v7q; do
    rm -rf CUDA.$probe; cp -r CUDA.v7_packed CUDA.$probe; rm -rf CUDA.$probe/.build CUDA.$probe/transpose
  done
  sed -i 's/constexpr int ELEMENT_TILE = sizeof(T) <= 8 ? 64 : 32;/constexpr int ELEMENT_TILE = sizeof(T) <= 4 ? 64 : 32;/' CUDA.v7t/transpose.cu
  sed -i 's/^constexpr int BLOCK_ROWS = 8;/constexpr int BLOCK_ROWS = 16;/' CUDA.v7h/transpose.cu
  sed -i 's/constexpr int REALIGN_MIN_BLOCKS = sizeof(T) == 1 ? 2 : 3;/constexpr int REALIGN_MIN_BLOCKS = sizeof(T) == 1 ? 2 : 4;/' CUDA.v7q/transpose.cu
  echo "edits: $(grep -c 'sizeof(T) <= 4 ? 64' CUDA.v7t/transpose.cu) $(grep -c '^constexpr int BLOCK_ROWS = 16' CUDA.v7h/transpose.cu) $(grep -c '1 ? 2 : 4' CUDA.v7q/transpose.cu)"
  for p in v7t v7h v7q; do make -C CUDA.$p -j8 > $R/${p}_build.log 2>&1 & done; wait
  for d in float16 float32 float64 complex64 complex128; do for st in CUDA.v7_packed CUDA.v7t CUDA.v7h CUDA.v7q CUDA.cublas; do
    timeout 30 $st/transpose 8191 8193 --dtype $d --reps 20 --csv $R/v7probe2.csv > $R/probe_last.log 2>&1
    rc=$?; [ $rc -ne 0 ] && [ $rc -ne 2 ] && echo "FAILED $st $d rc=$rc: $(tail -2 $R/probe_last.log)"
  done; done
  python3 - $R/v7probe2.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(f"{r['step']:16} {r['dtype']:10} {float(r['median_ms']):8.4f} ms {float(r['pct_of_ceiling']):5.1f}% {r['verified']}")
PY
  for st in CUDA.v7t CUDA.v7h CUDA.v7q CUDA.v7_packed; do for d in float16 float64 complex128; do for s in "67 45" "37 4111" "1 400000"; do
    timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $st/transpose $s --dtype $d --reps 1 > $R/probe_san.log 2>&1
    rc=$?; [ $rc -ne 0 ] && echo "sanitizer FAILED $st $d $s rc=$rc $(grep -m1 ERROR $R/probe_san.log)"
  done; done; done; echo "probe sanitizers done"
}
san8() {
  for d in float64 complex64 float16; do for s in "67 45" "37 4111" "1025 513" "1 400000"; do for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 CUDA.v7_packed/transpose $s --dtype $d --reps 1 > $R/san_last.log 2>&1
    rc=$?; echo "$tool v7 $d $s rc=$rc $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san_last.log)" >> $R/sanitizer_v7.log
    [ $rc -ne 0 ] && echo "sanitizer FAILED $tool $d $s rc=$rc"
  done; done; done; echo "san8: $(grep -c 'rc=0' $R/sanitizer_v7.log) of $(wc -l < $R/sanitizer_v7.log) clean"
}
bench() {
  timeout $(( $(left) - 5 )) make bench RESULTS=$R BENCH_DTYPES="$TYPES" REPS=10 > $R/make-bench.log 2>&1; echo "bench rc=$?"
  sed -n '/^dtype /,$p' $R/make-bench.log
}
sweep() {
  timeout $(( $(left) - 10 )) python3 -m transpose_lab.other_kinds streams-sweep --results $R --streams-list 3 4 --down-blocks-list 8 12 16 24 32 > $R/make-streams-sweep.log 2>&1; echo "sweep rc=$?"
  python3 - $R/streams_sweep.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    if r["variant"] == "pipeline": print(f"{r['launch'][:60]:60} {float(r['median_ms']):8.3f} ms {float(r['pct_of_ceiling']):5.1f}%")
PY
}
streams() {
  timeout $(( $(left) - 10 )) make streams RESULTS=$R > $R/make-streams.log 2>&1; echo "streams rc=$?"
  python3 - $R/streams.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(f"{r['step']:16} {r['variant']:17} {r['rows']}x{r['cols']} {r['dtype']:8} {float(r['median_ms']):9.3f} ms {float(r['pct_of_ceiling']):5.1f}%")
PY
}
ooc() {
  timeout $(( $(left) - 5 )) make out-of-core RESULTS=$R > $R/make-out-of-core.log 2>&1; echo "out of core rc=$?"
  grep -E "^  (pipeline|serial|copy|pieces|speedup)|check" $R/out_of_core.log | head -12
}
planted() {
  timeout $(( $(left) - 5 )) python3 -m pytest -q -rs -p no:cacheprovider tests/test_course.py -k planted > $R/test_planted.log 2>&1; echo "planted rc=$?"; tail -8 $R/test_planted.log
}
quickbuild() {
  nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt 2>&1; lscpu | grep -E "Model name|^CPU\(s\)" >> $R/machine.txt
  make -j16 all > $R/build.log 2>&1 || { grep -B2 -A8 error $R/build.log | head -30; exit 1; }; echo built
}
cpudtypes() {
  timeout $(( $(left) - 5 )) make dtypes DTYPES_STEPS=CPU.omp RESULTS=$R/cpu > $R/make-dtypes-cpu.log 2>&1; echo "dtypes rc=$?"
  grep -A4 "^step" $R/make-dtypes-cpu.log | head -8; grep -E "blocked" $R/cpu/dtypes.log | head -0
  python3 - $R/cpu/dtypes.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(f"{r['variant']:8} {r['dtype']:10} {float(r['median_ms']):9.3f} ms {float(r['pct_of_ceiling']):5.1f}% threads {r['threads']}")
PY
}
narrow() {
  timeout $(( $(left) - 5 )) make streams RESULTS=$R/narrow STREAMS_CASES="8192x8192:uint8 8191x8193:float16" > $R/make-streams-narrow.log 2>&1; echo "narrow rc=$?"
  python3 - $R/narrow/streams.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(f"{r['step']:16} {r['variant']:17} {r['rows']}x{r['cols']} {r['dtype']:8} {float(r['median_ms']):9.3f} ms {float(r['pct_of_ceiling']):5.1f}%")
PY
}
multigpu() {
  timeout $(( $(left) - 5 )) make multigpu RESULTS=$R > $R/make-multigpu.log 2>&1; echo "multigpu rc=$?"; grep -vE "^(make|\.venv|python)" $R/make-multigpu.log | tail -6
}
gputests() {
  timeout $(( $(left) - 5 )) python3 -m pytest -q -rs -p no:cacheprovider tests/test_cuda_steps.py -k "variant or copy" > $R/test_variants_copy.log 2>&1; echo "tests rc=$?"; tail -2 $R/test_variants_copy.log
}
run_sections "$@"

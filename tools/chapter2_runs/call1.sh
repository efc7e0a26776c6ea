#!/usr/bin/env bash
# One-off GPU call for issue 14: build, smoke every step x dtype, sanitizers, v6 before/after, dtypes.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $OUT/machine.txt; lscpu | grep "Model name" >> $OUT/machine.txt
t0=$SECONDS
make -j16 all > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
make -C .baseline/CUDA.v6_locality -j4 > $OUT/build_base.log 2>&1 || tail -20 $OUT/build_base.log
echo "build $((SECONDS-t0)) s"
STEPS="CUDA.v1 CUDA.v2 CUDA.v3 CUDA.v4 CUDA.v5_unroll CUDA.v6_locality CUDA.cublas"
DT="uint8 float16 bfloat16 float32 float64 complex64 complex128"
# smoke: one odd shape per step x dtype
for s in $STEPS; do for d in $DT; do
  $s/transpose 37 4111 --dtype $d --reps 2 > /tmp/o.txt 2>&1; rc=$?
  [ $rc -ne 0 ] && { echo "SMOKE $s $d rc=$rc"; tail -3 /tmp/o.txt; }
done; done > $OUT/smoke.log 2>&1
echo "smoke done $((SECONDS-t0)) s"; cat $OUT/smoke.log | head -30
# sanitizers in parallel
for s in $STEPS; do for d in $DT; do for tool in memcheck racecheck; do echo "$tool $s $d"; done; done; done | \
  xargs -P 8 -L 1 sh -c 'r=$(compute-sanitizer --tool $0 --error-exitcode 9 $1/transpose 67 45 --dtype $2 --reps 1 2>&1); rc=$?; echo "$0 $1 $2 rc=$rc $(echo "$r" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tr "\n" " ")"' > $OUT/sanitizer.log 2>&1
echo "sanitizer done $((SECONDS-t0)) s"; grep -v "rc=0 .*0 errors\|rc=2 " $OUT/sanitizer.log | head -20; grep -c "rc=0" $OUT/sanitizer.log
# v6 before/after, alternating, 3 rounds
for n in 8192 16384; do for round in 1 2 3; do
  .baseline/CUDA.v6_locality/transpose $n --csv $OUT/v6_before.csv > /dev/null || echo "base fail"
  CUDA.v6_locality/transpose $n --csv $OUT/v6_after.csv > /dev/null || echo "new fail"
done; done
echo "v6 done $((SECONDS-t0)) s"
python3 - <<'PY'
import csv, os, statistics
o=os.environ.get("OUT","/tmp/out")
for f in ("v6_before","v6_after"):
    rows=list(csv.DictReader(open(f"{o}/{f}.csv")))
    for n in ("8192","16384"):
        ms=[float(r["median_ms"]) for r in rows if r["rows"]==n]
        pct=[float(r["pct_of_ceiling"]) for r in rows if r["rows"]==n]
        print(f, n, "median_ms", ms, "pct", pct)
PY
make dtypes RESULTS=$OUT > $OUT/make-dtypes.log 2>&1; echo "dtypes rc=$? $((SECONDS-t0)) s"
tail -25 $OUT/make-dtypes.log

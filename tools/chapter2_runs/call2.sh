#!/usr/bin/env bash
# v7 check: correctness on odd shapes for every type, sanitizers, and speed against v6 and cuBLAS.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$SECONDS
for s in CUDA.v6_locality CUDA.v7_packed CUDA.cublas; do make -C $s -j4 > $OUT/build_$s.log 2>&1 || { tail -30 $OUT/build_$s.log; exit 1; }; done
echo "build $((SECONDS-t0)) s"
DT="uint8 float16 bfloat16 float32 float64 complex64 complex128"
for d in $DT; do for shape in "1 4099" "4099 1" "37 4111" "2049 1025" "33 1" "1 1" "64 48" "8191 8193"; do
  CUDA.v7_packed/transpose $shape --dtype $d --reps 2 > /tmp/o.txt 2>&1 || { echo "FAIL v7 $d $shape"; tail -2 /tmp/o.txt; }
done; done 2>&1 | tee $OUT/v7_smoke.log | head -20
echo "smoke $((SECONDS-t0)) s"
for d in $DT; do for shape in "67 45" "64 48" "130 257"; do for tool in memcheck racecheck; do echo "$tool $d $shape"; done; done; done | \
  xargs -P 8 -L 1 sh -c 'r=$(compute-sanitizer --tool $0 --error-exitcode 9 CUDA.v7_packed/transpose $2 $3 --dtype $1 --reps 1 2>&1); echo "$0 $1 $2x$3 rc=$? $(echo "$r" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tr "\n" " ")"' > $OUT/v7_sanitizer.log 2>&1
grep -v "rc=0" $OUT/v7_sanitizer.log | head; echo "sanitizer ok: $(grep -c 'rc=0' $OUT/v7_sanitizer.log) of $(wc -l < $OUT/v7_sanitizer.log) $((SECONDS-t0)) s"
for shape in "8192 8192" "16384 16384" "8191 8193" "1024 65536" "65536 1024"; do for d in $DT; do
  for s in CUDA.v6_locality CUDA.v7_packed CUDA.cublas; do $s/transpose $shape --dtype $d --csv $OUT/v7_bench.csv > /dev/null 2>&1; done
done; done
echo "bench $((SECONDS-t0)) s"
python3 - <<'PY'
import csv, os
o=os.environ.get("OUT","/tmp/out")
rows=list(csv.DictReader(open(f"{o}/v7_bench.csv")))
key=lambda r:(r["rows"]+"x"+r["cols"], r["dtype"])
seen={}
for r in rows: seen.setdefault(key(r),{})[r["step"]]=r
for k,v in seen.items():
    line=f"{k[0]:>11} {k[1]:>10}"
    for s in ("CUDA.v6_locality","CUDA.v7_packed","CUDA.cublas"):
        line+= f"  {s[5:]:>7} {float(v[s]['pct_of_ceiling']):6.1f}% {float(v[s]['median_ms']):8.4f}ms" if s in v else f"  {s[5:]:>7}    n/a"
    print(line)
PY

#!/usr/bin/env bash
# Sixth session's device calls: tools/session6/measure.sh SECTION... (run from the repository root).
# Sections run in the order given; each writes under /tmp/r (tarred to $OUT/r.tgz at the end) and
# prints a few lines; one that would pass the time left (LIMIT, seconds) is skipped and says so.
#   build      make CUDA.v7_packed, CUDA.v8_streams, build/bus_probe; machine.txt
#   v8tests    tests/test_streams_step.py, eight at once (every test of the step on this GPU)
#   v8sanitize make sanitize SANITIZE_STEPS=CUDA.v8_streams (memcheck and racecheck)
#   busprobe   build/bus_probe at 1 GiB (rows 64 KiB apart: 16384^2 float32's output), then 16 GiB
#              (rows 256 KiB apart: 65536^2 float32's)
#   v8grid     CUDA.v8_streams at GRID_CASES (16384x16384:float32 8192x8192:float64) over the
#              GRID_PLANS below (pieces, column ranges, way down), each with its timeline
#   streams    make streams (both targets' cases; the CPU beside them)
#   ooc        make out-of-core (65536 x 131072 float32 through 2 GiB)
source "$(dirname "$0")/../device_call.sh"
export OMP_PROC_BIND=close OMP_PLACES=cores
BUILD_STEPS=${BUILD_STEPS:-"CPU.omp CUDA.v7_packed CUDA.v8_streams"}

build() {
  machine_txt $R/machine.txt
  make -j16 $BUILD_STEPS > $R/build.log 2>&1 && make -B build/bus_probe >> $R/build.log 2>&1 || { grep -B2 -A8 error $R/build.log | head -30; exit 1; }
  echo "built: $BUILD_STEPS build/bus_probe"; head -2 $R/machine.txt
}
v8tests() {
  timeout $(( $(left) - 10 )) python3 -m pytest -q -rs -n 8 tests/test_streams_step.py > $R/test_streams.log 2>&1
  echo "v8tests rc=$?"; tail -3 $R/test_streams.log; grep -E "^(FAILED|ERROR)" $R/test_streams.log | head
}
v8sanitize() {
  timeout $(( $(left) - 10 )) make sanitize SANITIZE_STEPS=CUDA.v8_streams RESULTS=$R/sanitize > $R/sanitize_make.log 2>&1
  echo "v8sanitize rc=$?"; tail -4 $R/sanitize_make.log
}
busprobe() {
  timeout 120 build/bus_probe --csv $R/bus_probe.csv --widths 1024,2048,4096,8192,16384,32768 --blocks 16,64 > $R/bus_probe_1g.log 2>&1
  echo "bus probe 1 GiB rc=$?"; cat $R/bus_probe_1g.log
  [ $(left) -lt 200 ] && { echo "16 GiB probe skipped: $(left) s left"; return; }
  timeout 200 build/bus_probe --csv $R/bus_probe.csv --gib 16 --pitch 262144 --widths 4096,16384,65536 --blocks 16 --reps 3 > $R/bus_probe_16g.log 2>&1
  echo "bus probe 16 GiB rc=$?"; cat $R/bus_probe_16g.log
}
busprobe2() {
  timeout 150 build/bus_probe --csv $R/bus_probe2.csv --widths 1024,2048,4096,8192,16384 --blocks 8,16,32,128,264 > $R/bus_probe2_1g.log 2>&1
  echo "bus probe 1 GiB rc=$?"; cat $R/bus_probe2_1g.log
  timeout 60 build/bus_probe --csv $R/bus_probe2.csv --mib 256 --widths 4096,16384 --blocks 16 > $R/bus_probe2_256m.log 2>&1
  echo "bus probe 256 MiB rc=$?"; cat $R/bus_probe2_256m.log
  [ $(left) -lt 150 ] && { echo "16 GiB probe skipped: $(left) s left"; return; }
  timeout 200 build/bus_probe --csv $R/bus_probe2.csv --gib 16 --pitch 262144 --widths 16384,65536 --blocks 16,128 --reps 3 > $R/bus_probe2_16g.log 2>&1
  echo "bus probe 16 GiB rc=$?"; cat $R/bus_probe2_16g.log
}
# Why the pipeline's 2D copies ran at 0.65x the probe's (call 1): rows per copy, or streams?
twod() {
  timeout 60 build/bus_probe --csv $R/twod.csv --mib 256 --widths 4096,8192,16384 --blocks none > $R/twod_256m.log 2>&1
  echo "256 MiB rc=$?"; cat $R/twod_256m.log
  for k in 4096 1024; do
    timeout 60 build/bus_probe --csv $R/twod.csv --widths 8192,16384 --blocks none --copy-rows $k > $R/twod_rows$k.log 2>&1
    echo "1 GiB, copies of $k rows rc=$?"; cat $R/twod_rows$k.log
  done
  for plan in 1:4:copy-engine:3 1:4:copy-engine:1 4:4:copy-engine:1 4:4:copy-engine:2 4:4:copy-engine:3 4:1:copy-engine:3; do
    IFS=: read -r pieces ranges down streams <<< "$plan"; local tag=twod_${plan//:/-}
    timeout 60 CUDA.v8_streams/transpose 16384 16384 --pieces $pieces --piece-cols $ranges --down $down --streams $streams --csv $R/twod_v8.csv --timeline $R/timeline_$tag.csv > $R/$tag.log 2>&1
    echo "$plan rc=$? $(grep -E '^  (pipeline|copy-engine-down)' $R/$tag.log | awk '{print $(NF-4), "ms", $(NF-2)}')"
    python3 - $R/timeline_$tag.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows[:4]:
    f = lambda k: float(r[k])
    print(f"   piece {r['piece']} {r['rows']}x{r['cols']}: up {f('up_start_ms'):.2f}-{f('up_end_ms'):.2f} down {f('down_start_ms'):.2f}-{f('down_end_ms'):.2f}")
PY
  done
}
# The same 2D copy (16384 rows of 16 KiB, rows 64 KiB apart) in the probe and in v8, one after the
# other, and v8 under other conditions: is it the process or the code?
twod2() {
  local v8="CUDA.v8_streams/transpose 16384 16384 --pieces 1 --piece-cols 4 --down copy-engine --streams 1 --csv $R/twod2_v8.csv"
  probe() { timeout 60 build/bus_probe --csv $R/twod2.csv --widths 16384 --blocks none > $R/twod2_probe.log 2>&1; echo "probe $1: $(grep -E '^16384 +2d/- ' $R/twod2_probe.log)"; }
  v8run() { local tag=$1; shift; timeout 60 env "$@" $v8 --timeline $R/timeline_twod2_$tag.csv > $R/twod2_$tag.log 2>&1
    echo "v8 $tag rc=$? $(grep -E '^  copy-engine-down' $R/twod2_$tag.log | awk '{print $(NF-4), "ms", $(NF-2)}') up0 $(sed -n 2p $R/timeline_twod2_$tag.csv | cut -d, -f5,6)"; }
  probe first; v8run plain X=1; probe second; v8run omp1 OMP_NUM_THREADS=1; v8run noprobind OMP_PROC_BIND=false
  timeout 60 $v8 --reps 3 > $R/twod2_notimeline.log 2>&1; echo "v8 no timeline: $(grep -E '^  copy-engine-down' $R/twod2_notimeline.log | awk '{print $(NF-4), "ms", $(NF-2)}')"
  probe third
}
# Out of core with tiles moved by the copy engines both ways (the probe: 2D copies of 32-64 KiB rows
# reach the ceiling at a 256 KiB pitch, the SMs' writes 64%).
ooctiles() {
  for plan in ${OOC_PLANS:-8:16}; do IFS=: read -r pieces ranges streams <<< "$plan"; streams=${streams:-3}
    [ $(left) -lt 150 ] && { echo "ooc tiles $plan skipped: $(left) s left"; continue; }
    timeout $(( $(left) - 10 )) CUDA.v8_streams/transpose 65536 131072 --device-mem 2147483648 --reps 3 --pieces $pieces --piece-cols $ranges --streams $streams --down copy-engine --csv $R/ooctiles.csv --timeline $R/timeline_ooc_$pieces-$ranges-$streams.csv > $R/ooctiles_$pieces-$ranges-$streams.log 2>&1
    echo "ooc tiles $plan rc=$? $(grep -E '^  pieces' $R/ooctiles_$pieces-$ranges-$streams.log | cut -c1-100)"
    grep -E '^  (copy-engine-down|copy|serial)' $R/ooctiles_$pieces-$ranges-$streams.log | awk '{print "   ", $1, $(NF-4), "ms", $(NF-2)}'
  done
}
# Both directions on one stream: is a 2D copy slow after a copy the other way on its stream?
onestream() {
  timeout 60 build/bus_probe --csv $R/onestream.csv --widths 4096,16384,32768 --blocks none --one-stream > $R/onestream.log 2>&1
  echo "one stream rc=$?"; cat $R/onestream.log
}
# Tiles against the translation of host pages (call 5: a 2D copy over host pages not touched since
# other copies ran is 1.5x slower than over warm ones): the default bands cut into 2 and 4 ranges.
tilesdown() {
  for c in "16384 float32 --piece-cols 1" "16384 float32 --piece-cols 2" "16384 float32 --piece-cols 4" \
           "16384 float32 --pieces 32 --piece-cols 2" "16384 float32 --pieces 128 --piece-cols 4" \
           "8192 float64 --piece-cols 1" "8192 float64 --piece-cols 2" "8192 float64 --piece-cols 4"; do
    set -- $c; local n=$1 dtype=$2; shift 2; local tag="tilesdown_${n}_${dtype}_$(echo $* | tr ' ' '_')"
    timeout 60 CUDA.v8_streams/transpose $n $n --dtype $dtype "$@" --csv $R/tilesdown.csv --timeline $R/timeline_$tag.csv > $R/$tag.log 2>&1
    echo "$n^2 $dtype $* rc=$? $(grep -E '^  pipeline' $R/$tag.log | awk '{print $(NF-4), "ms", $(NF-2)}') serial $(grep -E '^  serial' $R/$tag.log | awk '{print $(NF-4)}') | $(grep -E '^  pieces' $R/$tag.log | cut -c12-80)"
  done
}
ooc65536() {
  timeout 200 CUDA.v8_streams/transpose 65536 65536 --device-mem 2147483648 --reps 3 --csv $R/ooc65536.csv > $R/ooc65536.log 2>&1
  echo "65536^2 float32 through 2 GiB rc=$? $(grep -E '^  pieces' $R/ooc65536.log | cut -c1-100)"
  grep -E '^  (pipeline|copy-engine-down|copy|serial) ' $R/ooc65536.log | awk '{print "   ", $1, $(NF-4), "ms", $(NF-2)}'
}
# One down at a time against several (--down-order, which only eb85bca has: measured there, then
# reverted), alternating processes, then the serial order with more blocks and streams.
downorder() {
  for c in "16384 float32" "8192 float64"; do set -- $c
    for args in "--down-order serial" "--down-order free" "--down-order serial" "--down-order free" \
                "--down-blocks 24" "--down-blocks 32" "--streams 4" "--down-order free --down-blocks 8"; do
      local tag="downorder_$1_$2_$(echo $args | tr ' ' '_')"
      timeout 60 CUDA.v8_streams/transpose $1 $1 --dtype $2 $args --csv $R/downorder.csv --timeline $R/timeline_$tag.csv > $R/$tag.log 2>&1
      echo "$1^2 $2 $args rc=$? $(grep -E '^  pipeline' $R/$tag.log | awk '{print $(NF-4), "ms", $(NF-2)}') ceiling $(grep -E '^  copy ' $R/$tag.log | awk '{print $(NF-4)}') serial $(grep -E '^  serial' $R/$tag.log | awk '{print $(NF-4)}')"
    done
  done
}
# The default against the nearest settings, alternating processes, at both in-core targets.
near() {
  for c in "16384 float32" "8192 float64"; do set -- $c
    for args in "" "--pieces 32 --piece-cols 2" "--pieces 48" "" "--pieces 32 --piece-cols 2" "--pieces 96" "--pieces 32"; do
      local tag="near_$1_$2_$(echo x $args | tr ' ' '_')"
      timeout 60 CUDA.v8_streams/transpose $1 $1 --dtype $2 $args --csv $R/near.csv > $R/$tag.log 2>&1
      echo "$1^2 $2 ${args:-default} rc=$? $(grep -E '^  pipeline' $R/$tag.log | awk '{print $(NF-4), "ms", $(NF-2)}') ceiling $(grep -E '^  copy ' $R/$tag.log | awk '{print $(NF-4)}') serial $(grep -E '^  serial' $R/$tag.log | awk '{print $(NF-4)}')"
    done
  done
}
# make test's suite on this GPU, eight tests at once (the README's command builds, then runs pytest).
fulltests() {
  make -j16 all tests-build build/bus_probe > $R/build_all.log 2>&1 || { echo "build failed"; tail -20 $R/build_all.log; return; }
  echo "built all ($((SECONDS - t0)) s)"
  timeout $(( $(left) - 15 )) python3 -m pytest -q -rs -n 8 tests > $R/make_test_gpu.log 2>&1
  echo "fulltests rc=$?"; tail -2 $R/make_test_gpu.log; grep -E "^(FAILED|ERROR)" $R/make_test_gpu.log | head -20
  grep -c "^SKIPPED" $R/make_test_gpu.log
}
GRID_PLANS=${GRID_PLANS:-"default 64:1:kernel 128:1:kernel 16:16:copy-engine 8:8:copy-engine 4:16:copy-engine 4:4:copy-engine 16:16:kernel 4:16:kernel"}
v8grid() {
  for c in ${GRID_CASES:-16384x16384:float32 8192x8192:float64}; do
    local shape=${c%%:*} dtype=${c##*:}
    for plan in $GRID_PLANS; do
      [ $(left) -lt 40 ] && { echo "grid $c $plan skipped: $(left) s left"; continue; }
      local args=(); if [ $plan != default ]; then IFS=: read -r pieces ranges down <<< "$plan"
        args=(--pieces $pieces --piece-cols $ranges --down $down); fi
      local tag=${shape}_${dtype}_${plan//:/-}
      timeout 60 CUDA.v8_streams/transpose ${shape/x/ } --dtype $dtype --csv $R/v8grid.csv --timeline $R/timeline_$tag.csv "${args[@]}" > $R/grid_$tag.log 2>&1
      echo "$c $plan rc=$? $(grep -E '^  (pipeline|copy-engine-down)' $R/grid_$tag.log | awk '{print $(NF-4), "ms", $(NF-2)}') ceiling $(grep -E '^  copy' $R/grid_$tag.log | awk '{print $(NF-4), "ms"}') serial $(grep -E '^  serial' $R/grid_$tag.log | awk '{print $(NF-4), "ms"}')"
    done
  done
}
streams() {
  timeout $(( $(left) - 10 )) make streams RESULTS=$R/streams > $R/make_streams.log 2>&1
  echo "streams rc=$?"; grep -E "^\| CUDA|pipeline|speedup" $R/make_streams.log | head -20
}
ooc() {
  timeout $(( $(left) - 10 )) make out-of-core RESULTS=$R/ooc > $R/make_ooc.log 2>&1
  echo "ooc rc=$?"; tail -12 $R/make_ooc.log
}
run_sections "$@"

#!/usr/bin/env bash
# Seventh session's device calls: tools/session7/measure.sh SECTION... (run from the repository root).
# Sections run in the order given; each writes under /tmp/r (tarred to $OUT/r.tgz at the end) and
# prints a few lines; one that would pass the time left (LIMIT, seconds) is skipped and says so.
#   build      make CPU.omp, CUDA.v7_packed, CUDA.v8_streams, build/bus_probe; machine.txt, and
#              the kernel's transparent-huge-page settings
#   hugeprobe  build/bus_probe with the driver's pinned pages and with 2 MiB pages, 1 GiB (rows
#              64 KiB apart) then 16 GiB (rows 256 KiB apart)
#   v8huge     CUDA.v8_streams at 16384^2 float32 and 8192^2 float64, --host-memory pinned and
#              huge alternating, HUGE_ROUNDS processes each
#   ramp       CUDA.v8_streams at 16384^2 float32 and 8192^2 float64, each of RAMP_VARIANTS (the
#              default, --ramp 0, ...) in turn, RAMP_ROUNDS rounds; the default's timeline once
#   v8tests    tests/test_streams_step.py and tests/test_bus_probe.py, eight at once
#   v8sanitize make sanitize SANITIZE_STEPS=CUDA.v8_streams (memcheck and racecheck)
#   fulltests  make test's suite on this GPU, eight tests at once
#   streams    make streams (both targets' cases; the CPU beside them)
#   oochuge    65536 x 131072 float32 through 2 GiB (make out-of-core's run), --host-memory pinned
#              then huge
#   ooc        make out-of-core (65536 x 131072 float32 through 2 GiB)
source "$(dirname "$0")/../device_call.sh"
export OMP_PROC_BIND=close OMP_PLACES=cores
BUILD_STEPS=${BUILD_STEPS:-"CPU.omp CUDA.v7_packed CUDA.v8_streams"}

build() {
  machine_txt $R/machine.txt
  for f in enabled defrag; do echo "thp $f: $(cat /sys/kernel/mm/transparent_hugepage/$f 2>&1)"; done | tee -a $R/machine.txt
  grep -i huge /proc/meminfo >> $R/machine.txt
  make -j16 $BUILD_STEPS > $R/build.log 2>&1 && make -B build/bus_probe >> $R/build.log 2>&1 || { grep -B2 -A8 error $R/build.log | head -30; exit 1; }
  echo "built: $BUILD_STEPS build/bus_probe"; head -2 $R/machine.txt
}
hugeprobe() {
  for host in driver huge; do
    timeout 120 build/bus_probe --host $host --csv $R/hugeprobe.csv --widths 1024,2048,4096,16384,32768 --blocks 16 > $R/hugeprobe_1g_$host.log 2>&1
    echo "1 GiB $host rc=$?"; cat $R/hugeprobe_1g_$host.log
  done
  for host in driver huge; do
    [ $(left) -lt 150 ] && { echo "16 GiB $host skipped: $(left) s left"; continue; }
    timeout 150 build/bus_probe --host $host --csv $R/hugeprobe.csv --gib 16 --pitch 262144 --widths 4096,16384,65536 --blocks 16 --reps 3 > $R/hugeprobe_16g_$host.log 2>&1
    echo "16 GiB $host rc=$?"; cat $R/hugeprobe_16g_$host.log
  done
}
v8huge() {
  for c in "16384 float32" "8192 float64"; do set -- $c
    for round in $(seq ${HUGE_ROUNDS:-3}); do
      for host in pinned huge; do
        local tag="v8huge_$1_$2_${host}_$round"
        timeout 60 CUDA.v8_streams/transpose $1 $1 --dtype $2 --host-memory $host ${V8_ARGS:-} --csv $R/v8huge_$host.csv > $R/$tag.log 2>&1
        echo "$1^2 $2 $host rc=$? $(grep -E '^  pipeline' $R/$tag.log | awk '{print $(NF-4), "ms", $(NF-2)}') ceiling $(grep -E '^  copy ' $R/$tag.log | awk '{print $(NF-4)}') serial $(grep -E '^  serial +1 stream' $R/$tag.log | awk '{print $(NF-4)}') $(grep -o 'GiB) of this process on huge' $R/$tag.log)"
      done
    done
  done
  grep -h "^host" $R/v8huge_*_1.log | sort -u
}
RAMP_VARIANTS=${RAMP_VARIANTS:-"default|--ramp 0"}
ramp() {
  for c in "16384 float32" "8192 float64"; do set -- $c
    timeout 60 CUDA.v8_streams/transpose $1 $1 --dtype $2 --csv $R/ramp_timeline_runs.csv --timeline $R/timeline_$1_$2_default.csv > $R/ramp_timeline_$1_$2.log 2>&1
    echo "$1^2 $2 default with timeline rc=$?"
    local variants; IFS='|' read -ra variants <<< "$RAMP_VARIANTS"
    for round in $(seq ${RAMP_ROUNDS:-3}); do
      for variant in "${variants[@]}"; do
        local args=$variant; [ "$variant" = default ] && args=""
        local tag="ramp_$1_$2_$(echo x $args | tr ' ' '_')_$round"
        timeout 60 CUDA.v8_streams/transpose $1 $1 --dtype $2 $args --csv $R/ramp.csv > $R/$tag.log 2>&1
        echo "$1^2 $2 ${variant} rc=$? $(grep -E '^  pipeline' $R/$tag.log | awk '{print $(NF-4), "ms", $(NF-2)}') ceiling $(grep -E '^  copy ' $R/$tag.log | awk '{print $(NF-4)}') serial $(grep -E '^  serial +1 stream' $R/$tag.log | awk '{print $(NF-4)}') $(grep -o 'serial end to end: [0-9.]*x' $R/$tag.log)"
      done
    done
  done
}
v8tests() {
  timeout $(( $(left) - 10 )) python3 -m pytest -q -rs -n 8 tests/test_streams_step.py tests/test_bus_probe.py ${V8TESTS_MORE:-} > $R/test_streams.log 2>&1
  echo "v8tests rc=$?"; tail -3 $R/test_streams.log; grep -E "^(FAILED|ERROR)" $R/test_streams.log | head
}
v8sanitize() {
  timeout $(( $(left) - 10 )) make sanitize SANITIZE_STEPS=CUDA.v8_streams RESULTS=$R/sanitize > $R/sanitize_make.log 2>&1
  echo "v8sanitize rc=$?"; tail -4 $R/sanitize_make.log
}
fulltests() {
  make -j16 all tests-build build/bus_probe > $R/build_all.log 2>&1 || { echo "build failed"; tail -20 $R/build_all.log; return; }
  echo "built all ($((SECONDS - t0)) s)"
  timeout $(( $(left) - 15 )) python3 -m pytest -q -rs -n ${FULLTESTS_JOBS:-12} ${FULLTESTS_PATHS:-tests} ${FULLTESTS_ARGS:-} > $R/make_test_gpu.log 2>&1
  echo "fulltests rc=$?"; tail -2 $R/make_test_gpu.log; grep -E "^(FAILED|ERROR)" $R/make_test_gpu.log | head -20
  grep -c "^SKIPPED" $R/make_test_gpu.log
}
streams() {
  timeout $(( $(left) - 10 )) make streams RESULTS=$R/streams > $R/make_streams.log 2>&1
  echo "streams rc=$?"; tail -14 $R/make_streams.log
}
oochuge() {
  for host in pinned huge; do
    [ $(left) -lt 150 ] && { echo "oochuge $host skipped: $(left) s left"; continue; }
    timeout $(( $(left) - 10 )) CUDA.v8_streams/transpose 65536 131072 --device-mem 2147483648 --reps 3 --host-memory $host --csv $R/oochuge.csv > $R/oochuge_$host.log 2>&1
    echo "ooc $host rc=$? ($((SECONDS - t0)) s)"; grep -E "^  (host|pipeline|serial|copy) |speedup" $R/oochuge_$host.log
  done
}
ooc() {
  timeout $(( $(left) - 10 )) make out-of-core RESULTS=$R/ooc > $R/make_ooc.log 2>&1
  echo "ooc rc=$?"; tail -12 $R/make_ooc.log
}
run_sections "$@"

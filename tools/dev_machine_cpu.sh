#!/usr/bin/env bash
# The CPU figures the lab texts quote for the 2-core development machine, in one go:
#   tools/dev_machine_cpu.sh [OUTDIR]        (default docs/results/dev-machine)
# Runs CPU.omp's programs only (no GPU needed) and writes:
#   machine.txt            the CPU, the compiler, the load, the commit the code came from
#   blocked.csv            --variant blocked at 8192 x 8192, 5 runs at 2 threads, then 5 at 1
#   blocked_plain.csv      the same at 2 threads with LAB_STREAMING_STORES=off (3 runs): the
#                          transpose and its copy ceiling with plain stores
#   dtypes.csv             --variant blocked at 8192 x 8192, 2 threads, every element type
#   naive_odd.csv          --variant naive at 1 thread, 4096 x 4096 and 4095 x 4097
#   run.log                what the programs printed
# Threads are pinned as the make targets pin them (OMP_PROC_BIND=close OMP_PLACES=cores).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/dev-machine}
mkdir -p "$out"
rm -f "$out"/{blocked,blocked_plain,dtypes,naive_odd}.csv "$out/run.log"
make --no-print-directory CPU.omp > /dev/null
program=CPU.omp/transpose
export OMP_PROC_BIND=close OMP_PLACES=cores
{
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket|L3"
  echo "sysconf last-level cache (what the lab's streaming-store rule reads): $(getconf LEVEL3_CACHE_SIZE) bytes"
  "${CXX:-g++}" --version | head -1
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  commit=$(git rev-parse --short HEAD)
  # What CPU.omp is built from: its own folder and the host side of common/.
  if git diff --quiet HEAD -- CPU.omp 'common/*.cpp' 'common/*.hpp' common/step.mk; then
    echo "code: commit $commit (CPU.omp/ and common/'s host files as committed)"
  else
    echo "code: commit $commit with uncommitted changes in CPU.omp/ or common/'s host files"
  fi
  date -u +"run: %Y-%m-%d %H:%M UTC"
} > "$out/machine.txt"
cat "$out/machine.txt"

run() {  # run THREADS CSV [ARGS...]
  local threads=$1 csv=$2
  shift 2
  echo "== OMP_NUM_THREADS=$threads ${LAB_STREAMING_STORES:+LAB_STREAMING_STORES=$LAB_STREAMING_STORES }$program $*" \
    >> "$out/run.log"
  OMP_NUM_THREADS=$threads "$program" "$@" --csv "$out/$csv" >> "$out/run.log"
}

for _ in 1 2 3 4 5; do run 2 blocked.csv 8192 --variant blocked; done
for _ in 1 2 3 4 5; do run 1 blocked.csv 8192 --variant blocked; done
for _ in 1 2 3; do LAB_STREAMING_STORES=off run 2 blocked_plain.csv 8192 --variant blocked; done
for dtype in uint8 float16 bfloat16 float32 float64 complex64 complex128; do
  run 2 dtypes.csv 8192 --variant blocked --dtype "$dtype"
done
run 1 naive_odd.csv 4096 4096 --variant naive
run 1 naive_odd.csv 4095 4097 --variant naive
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
echo "wrote $out: $(cd "$out" && ls | tr '\n' ' ')"

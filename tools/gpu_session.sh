#!/usr/bin/env bash
# Everything the README's GPU figures come from, in one go on a GPU machine:
#   tools/gpu_session.sh OUTDIR [targets...]     (default targets: test run-all bench scaling sweep profile)
# Each target's output goes to OUTDIR/make-<target>.log and the CSVs to OUTDIR/.
set -uo pipefail
out=${1:?usage: tools/gpu_session.sh OUTDIR [targets...]}
shift
targets=${*:-test run-all bench scaling sweep profile}
mkdir -p "$out"
cd "$(dirname "$0")/.."
{
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket|NUMA node\(s\)"
  nvcc --version | tail -1
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
start=$SECONDS
make -j "$(nproc)" all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build: $((SECONDS - start)) s"
status=0
for target in $targets; do
  start=$SECONDS
  make "$target" RESULTS="$out" > "$out/make-$target.log" 2>&1
  rc=$?
  [ $rc -ne 0 ] && status=1
  echo "== make $target: exit $rc, $((SECONDS - start)) s"
  tail -n 25 "$out/make-$target.log"
done
exit $status

# The frame of every device call's script (tools/chapter2_runs/*.sh, tools/session3/measure.sh),
# sourced from it: results go under /tmp/r and come back tarred as $OUT/r.tgz whatever happens;
# LIMIT (seconds, default 570) is the time a script plans for, `left` what remains of it.
set -uo pipefail
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0  # NVLink multicast can take a shared machine down
R=/tmp/r; mkdir -p $R; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
finish() { tar czf $OUT/r.tgz -C $R . ; }
trap finish EXIT
t0=$SECONDS
LIMIT=${LIMIT:-570}
left() { echo $((LIMIT - (SECONDS - t0))); }
TYPES="uint8 float16 bfloat16 float32 float64 complex64 complex128"

# run_sections NAME...: each section is the function NAME (or run_NAME, where NAME is also a
# command the sections call, such as ncu), in order; one that would pass the time left is skipped
# and says so (build always runs).
run_sections() {
  local section
  for section in "$@"; do
    if [ "$section" != build ] && [ $(left) -lt 30 ]; then echo "== $section skipped: $(left) s left"; continue; fi
    echo "== $section ($((SECONDS - t0)) s)"
    if declare -F "run_$section" > /dev/null; then "run_$section"; else "$section"; fi
  done
  echo "== done $((SECONDS - t0)) s"
}

# machine_txt FILE: the GPUs, their links, the host's CPUs and memory, the compilers (every call
# keeps one beside its results).
machine_txt() {
  { nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv
    nvidia-smi topo -m; lscpu | grep -E "Model name|^CPU\(s\)|NUMA"; nvcc --version | tail -1
    free -g | head -2; mpirun --version 2>&1 | head -1; } > "$1" 2>&1
}

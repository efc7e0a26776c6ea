# The transpose lab: from an OpenMP loop on the CPU to a GPU kernel at memory speed.
# `make` (or `make help`) lists the targets. Set-up (build, Python venv) happens on demand.

# Every core by default (a command-line -j wins); the step makes share these jobs. Goals named
# together run one after another (`make clean all`; two measurements never share the machine).
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
ifneq ($(word 2,$(MAKECMDGOALS)),)
.NOTPARALLEL:
endif

# ---- The progression, written once: every target below derives from these lists. ----
CPU_STEPS  := CPU.omp
CUDA_STEPS := CUDA.v1 CUDA.v2 CUDA.v3 CUDA.v4 CUDA.v5_unroll CUDA.v6_locality CUDA.v7_packed
# Reference rows, not steps: the copy kernel first (what a kernel can reach), then the libraries.
REFERENCE_STEPS := CUDA.copy CUDA.cublas CUDA.cublaslt
LIBRARY_REFERENCES := CUDA.cublas CUDA.cublaslt
PROGRESSION := $(CPU_STEPS) $(CUDA_STEPS)
STEPS := $(PROGRESSION) $(REFERENCE_STEPS)
LAST_STEP := $(lastword $(CUDA_STEPS))
# Steps of other kinds (their own ceilings, their own sections): a matrix in host memory, and a
# matrix spread over several GPUs.
PIPELINE_STEPS := CUDA.v8_streams
DISTRIBUTED_STEPS := CUDA.v9_multigpu
# Chapter 3, N-d permutations: a progression of its own (make permute), built by make all; its
# programs take --shape and --perm, so no target above runs them.
PERMUTE_CPU_STEPS := PERMUTE.omp
PERMUTE_CUDA_STEPS := PERMUTE.v1_naive PERMUTE.v2_fused PERMUTE.v3_tiled PERMUTE.v4_small_planes \
  PERMUTE.v5_packed
PERMUTE_STEPS := $(PERMUTE_CPU_STEPS) $(PERMUTE_CUDA_STEPS)
ALL_STEPS := $(STEPS) $(PIPELINE_STEPS) $(DISTRIBUTED_STEPS) $(PERMUTE_STEPS)
# A step that links another step's kernel (`STEP_KERNEL := X` in its Makefile) is built after X,
# so that two makes in parallel never write X's object at once.
STEP_KERNEL_ORDER := $(shell awk -F ':= *' '/^STEP_KERNEL *:=/ {sub("/Makefile$$", "", FILENAME); \
  print FILENAME ":" $$2}' $(addsuffix /Makefile,$(ALL_STEPS)) 2>/dev/null)

# ---- Sizes and settings (override on the command line: make run-all ROWS=4096) ----
ROWS ?= 8192
COLS ?= $(ROWS)
REPS ?=
DTYPE ?= float32
PROFILE_SIZE ?= 4096
PROFILE_COLS ?=
SCALING_SIZE ?= 8192
SWEEP_SIZES ?= 256 512 1000 1024 2048 3000 4096 6000 8192 12000 16384
BENCH_SHAPES ?= 8192x8192 16384x16384 8191x8193 1024x65536 65536x1024
BENCH_DTYPES ?= $(DTYPE)
DTYPES_STEPS ?= $(STEPS)
STREAMS_CASES ?= 16384x16384:float32 8192x8192:float64 8192x8192:float32
OUT_OF_CORE_SHAPE ?= 65536x131072:float32
OUT_OF_CORE_DEVICE_MEM ?= 2147483648
BUS_PROBE_ARGS ?=
MULTIGPU_SIZES ?= 8192 16384
MULTIGPU_DTYPES ?= $(DTYPE)
MULTIGPU_GPUS ?=
MULTIGPU_EXCHANGES ?= nccl registered windows peer
MULTIGPU_MODES ?= single mpi one-gpu
RESULTS ?= results
OMP_PIN := OMP_PROC_BIND=close OMP_PLACES=cores

# ---- Toolchain detection: no nvcc means CPU steps only, said once. ----
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
export NVCC
ifeq ($(NVCC),)
  BUILT_STEPS := $(CPU_STEPS) $(PERMUTE_CPU_STEPS)
  NVCC_NOTE := @echo "nvcc not found: the CUDA steps are not built (install the CUDA toolkit for them)"
else
  BUILT_STEPS := $(ALL_STEPS)
  NVCC_NOTE := @true
endif

# ---- Python: the system python3 when it has what we need, else a local venv made once. ----
PYTHON_SYSTEM := python3
VENV := .venv
HAS_PY_PACKAGES := $(shell $(PYTHON_SYSTEM) -c 'import matplotlib, numpy, pytest' 2>/dev/null && echo yes)
ifeq ($(HAS_PY_PACKAGES)$(FORCE_VENV),yes)
  PY := $(PYTHON_SYSTEM)
  PY_READY :=
else
  PY := $(VENV)/bin/python
  PY_READY := $(VENV)/.ready
endif

RUN_STEPS := $(PY) -m transpose_lab.run_steps
SIZE_ARGS := --rows $(ROWS) --cols $(COLS) $(if $(REPS),--reps $(REPS))
DTYPE_ARG := --dtype $(DTYPE)

.DEFAULT_GOAL := help
.PHONY: help all run-all scaling sweep bench dtypes torch-reference streams streams-sweep \
	out-of-core bus-probe multigpu probes sanitize \
	plots profile texts texts-check reference test diff format clean permute \
        $(ALL_STEPS) tests-build

help:
	@echo "Transpose lab: one problem, one idea per step (see README.md)."
	@echo
	@echo "Steps, in order: $(PROGRESSION)   reference: $(REFERENCE_STEPS)"
	@echo "Other kinds: host pipeline $(PIPELINE_STEPS), distributed $(DISTRIBUTED_STEPS)"
	@echo "Chapter 3, any permutation of an N-d tensor (docs/permute.md): $(PERMUTE_STEPS)"
	@echo
	@echo "A student starts with $(firstword $(PROGRESSION))/README.md, then each step in order (cd STEP && make &&"
	@echo "./transpose 8192; its README.md is the lab text). It needs one NVIDIA GPU and nvcc for the"
	@echo "CUDA steps; without them the CPU step runs and the CUDA steps say skipped."
	@echo "An instructor starts with docs/instructor.md: make exercises, make check STEP=X, docs/expected/."
	@echo
	@echo "  make help          this list"
	@echo "  make all           build every step, on every core, one line each (V=1: the commands). CUDA"
	@echo "                     steps need nvcc; built for the GPU here, else sm_75 plus PTX (CUDA_ARCH=86"
	@echo "                     to choose; CUDA_ARCH=\"75 80 86 89 90\" for a build that runs fast anywhere)"
	@echo "  make run-all       run every step at ROWS x COLS (default 8192), one comparison table"
	@echo "  make test          build, then run the test suite (GPU tests skip without a GPU, the checks"
	@echo "                     past 2^32 elements where 10 GB of memory is not free: one line per reason;"
	@echo "                     7.5 min with the build on an H100 with 16 cores)"
	@echo "  make scaling       CPU.omp at OMP_NUM_THREADS = 1, 2, 4, ... cores -> results/scaling.csv"
	@echo "  make sweep         every step over SWEEP_SIZES -> results/sweep.csv"
	@echo "  make bench         $(LAST_STEP) vs the fastest of cuBLAS and cuBLASLt, as % of the copy, on"
	@echo "                     BENCH_SHAPES for each of BENCH_DTYPES (default DTYPE) -> results/bench.csv;"
	@echo "                     $(LAST_STEP)'s tma variant too, on Hopper, for rows of whole 16-byte units"
	@echo "  make dtypes        DTYPES_STEPS (default every step) for every element type at ROWS x COLS"
	@echo "                     -> results/dtypes.csv, dtypes.png"
	@echo "  make torch-reference  PyTorch x.t().contiguous() per dtype -> results/torch_reference.csv"
	@echo "  make streams       CUDA.v8_streams (both ways down, pageable, timeline) and CPU.omp blocked"
	@echo "                     at STREAMS_CASES -> results/streams.csv, streams_timeline.png"
	@echo "  make streams-sweep CUDA.v8_streams at the first of STREAMS_CASES over --streams 2..4 and"
	@echo "                     --down-blocks 8..132 -> results/streams_sweep.csv"
	@echo "  make out-of-core   CUDA.v8_streams at OUT_OF_CORE_SHAPE through OUT_OF_CORE_DEVICE_MEM bytes"
	@echo "                     of device memory -> results/out_of_core.csv"
	@echo "  make bus-probe     the bus pattern by pattern (contiguous, 2D copies, SM writes; alone and"
	@echo "                     beside the other direction): what $(PIPELINE_STEPS) can reach -> results/bus_probe.csv"
	@echo "                     (BUS_PROBE_ARGS: e.g. --gib 16 --pitch 262144 --widths 4096,16384)"
	@echo "  make multigpu      CUDA.v9_multigpu on 1, 2, 4, 8 GPUs up to the visible ones (MULTIGPU_GPUS),"
	@echo "                     one process and mpirun -np G, at MULTIGPU_SIZES x MULTIGPU_DTYPES, with each"
	@echo "                     of MULTIGPU_EXCHANGES (default nccl registered windows peer) on 2 GPUs or more,"
	@echo "                     next to its all-to-all, and CUDA.v7_packed on one GPU -> results/multigpu.csv, .png"
	@echo "                     (MULTIGPU_MODES: some of single mpi one-gpu, default all three)"
	@echo "  make probes       CUDA.v7_packed with one constant changed (PROBES=..., default all; list:"
	@echo "                     python -m transpose_lab.probes --list) at PROBE_SHAPE -> results/probes.csv"
	@echo "  make sanitize      compute-sanitizer memcheck and racecheck of SANITIZE_STEPS (default the last"
	@echo "                     step and $(PIPELINE_STEPS)) on small ragged shapes, every type -> results/sanitizer.log"
	@echo "  make permute       chapter 3 (N-d permutations): every step of it, and PyTorch's"
	@echo "                     x.permute(perm).contiguous() where torch is, on the named cases"
	@echo "                     (python -m transpose_lab.permute_cases --list) for each of"
	@echo "                     PERMUTE_DTYPES (default float32 uint8) -> results/permute.csv, .png"
	@echo "  make profile       Nsight Compute metrics of every CUDA step at PROFILE_SIZE (x PROFILE_COLS)"
	@echo "                     -> results/profile.csv"
	@echo "  make plots         PNG pictures from the CSV files in results/"
	@echo "  make texts         rewrite every table and figure between markers in every *.md from"
	@echo "                     docs/results/<machine>/ (transpose_lab/texts.py says how markers read)"
	@echo "  make texts-check   the same in memory: fails naming file, line, text and data on a difference"
	@echo "  make reference     docs/results/MACHINE/ from nothing (MACHINE from nvidia-smi: h100, h200,"
	@echo "                     h200x2, ...; cpu-dev without a GPU): machine.txt, CSVs, pictures, logs."
	@echo "                     PART= one part (times measured on one H100):"
	@echo "                       kernels  run-all, sweep, scaling, bench (every type)   5.5 min"
	@echo "                       types    dtypes (with PyTorch rows where torch is)     3 min"
	@echo "                       permute  chapter 3's named cases, a type per size    11 min"
	@echo "                       streams  streams, out-of-core, bus-probe               2.5 min"
	@echo "                       multigpu multigpu on 1, 2, 4, 8 GPUs up to the visible ones"
	@echo "                                (a machine with several GPUs: its own folder, e.g. h100x4;"
	@echo "                                longer than ten minutes: on two H200s 32768^2 float32 4 min,"
	@echo "                                complex128 7 min, 65536^2 float32 7 min, complex128 more)"
	@echo "                       profile  Nsight Compute counters                       0.5 min"
	@echo "                     no PART: every part in turn (cpu-dev: kernels, types and permute, the"
	@echo "                     CPU steps only);"
	@echo "                     DRY_RUN=1 prints the commands"
	@echo "  make diff STEP=X   what step X changed against the step before it"
	@echo "  make exercises     exercises/: every step with its lesson lines taken out (FORCE=1 overwrites)"
	@echo "  make check STEP=X  grade step X (FROM=exercises: its exercise, FROM=DIR: DIR/transpose.cu;"
	@echo "                     FULL=1 adds the shape past 2^31 elements: 17 GB of memory, minutes);"
	@echo "                     without a GPU a CUDA step says skipped (the grader itself exits 77)"
	@echo "  make format        clang-format every C++/CUDA source"
	@echo "  make clean         remove builds and results"
	@echo
	@echo "Variables: ROWS COLS REPS DTYPE SCALING_SIZE SWEEP_SIZES BENCH_SHAPES BENCH_DTYPES PROFILE_SIZE"
	@echo "           PROFILE_COLS DTYPES_STEPS PROBES PROBE_SHAPE PROBE_DTYPES STREAMS_CASES"
	@echo "           SANITIZE_STEPS SANITIZE_DTYPES"
	@echo "           OUT_OF_CORE_SHAPE OUT_OF_CORE_DEVICE_MEM BUS_PROBE_ARGS MULTIGPU_SIZES MULTIGPU_DTYPES"
	@echo "           MULTIGPU_GPUS MULTIGPU_EXCHANGES MULTIGPU_MODES CUDA_ARCH PERMUTE_DTYPES"
	@echo "  DTYPE (run-all, scaling, sweep, bench, profile; default float32): uint8 float16 bfloat16"
	@echo "        float32 float64 complex64 complex128"

all: $(BUILT_STEPS)
	$(NVCC_NOTE)

$(ALL_STEPS):
	@$(MAKE) --no-print-directory --output-sync=target -C $@
$(foreach rule,$(STEP_KERNEL_ORDER),$(eval $(rule)))

$(VENV)/.ready: requirements.txt
	@echo "setting up a local Python environment in $(VENV) (first time only)"
	$(PYTHON_SYSTEM) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -r requirements.txt
	@touch $@

run-all: all $(PY_READY)
	@mkdir -p $(RESULTS)
	$(OMP_PIN) $(RUN_STEPS) run-all --steps $(STEPS) $(SIZE_ARGS) $(DTYPE_ARG) --csv $(RESULTS)/run_all.csv \
	  --other-steps $(PIPELINE_STEPS) $(DISTRIBUTED_STEPS)

scaling: $(CPU_STEPS) $(PY_READY)
	@mkdir -p $(RESULTS)
	$(OMP_PIN) $(RUN_STEPS) scaling --steps $(CPU_STEPS) --rows $(SCALING_SIZE) --cols $(SCALING_SIZE) \
	  $(if $(REPS),--reps $(REPS)) $(DTYPE_ARG) --csv $(RESULTS)/scaling.csv

sweep: all $(PY_READY)
	@mkdir -p $(RESULTS)
	$(OMP_PIN) $(RUN_STEPS) sweep --steps $(STEPS) --sizes $(SWEEP_SIZES) $(if $(REPS),--reps $(REPS)) \
	  $(DTYPE_ARG) --csv $(RESULTS)/sweep.csv

bench: $(LAST_STEP) $(LIBRARY_REFERENCES) $(PY_READY)
	@mkdir -p $(RESULTS)
	$(RUN_STEPS) bench --steps $(LIBRARY_REFERENCES) $(LAST_STEP) --shapes $(BENCH_SHAPES) \
	  $(if $(REPS),--reps $(REPS)) --dtypes $(BENCH_DTYPES) --csv $(RESULTS)/bench.csv

# Every step for every element type at ROWS x COLS: one CSV, one step x dtype table, one picture
# (the picture is drawn even when a step failed, from the rows that were written).
dtypes: $(if $(filter-out $(STEPS),$(DTYPES_STEPS)),all,$(DTYPES_STEPS)) $(PY_READY)
	@mkdir -p $(RESULTS)
	@status=0; $(OMP_PIN) $(RUN_STEPS) dtypes --steps $(DTYPES_STEPS) $(SIZE_ARGS) \
	  --csv $(RESULTS)/dtypes.csv || status=$$?; \
	$(TORCH_REFERENCE) --csv $(RESULTS)/dtypes.csv || [ $$? -eq 77 ] || status=1; \
	[ ! -f $(RESULTS)/dtypes.csv ] || $(PY) -m transpose_lab.plot_dtypes \
	  --csv $(RESULTS)/dtypes.csv --out $(RESULTS)/dtypes.png || status=1; exit $$status

# PyTorch's x.t().contiguous() per type, what a user would otherwise call (skipped without torch).
TORCH_PYTHON = $(if $(shell python3 -c 'import torch' 2>/dev/null && echo y),python3,$(PY))
TORCH_REFERENCE = $(TORCH_PYTHON) -m transpose_lab.torch_reference --rows $(ROWS) --cols $(COLS) \
  $(if $(REPS),--reps $(REPS))
torch-reference: $(PY_READY)
	@mkdir -p $(RESULTS)
	@$(TORCH_REFERENCE) --csv $(RESULTS)/torch_reference.csv || [ $$? -eq 77 ]

# The steps of other kinds: their own ceilings, their own CSVs (transpose_lab/other_kinds.py).
OTHER_KINDS := $(PY) -m transpose_lab.other_kinds
streams: $(PIPELINE_STEPS) $(CPU_STEPS) $(PY_READY)
	$(OTHER_KINDS) streams --results $(RESULTS) --cases $(STREAMS_CASES)

streams-sweep: $(PIPELINE_STEPS) $(PY_READY)
	$(OTHER_KINDS) streams-sweep --results $(RESULTS) --cases $(firstword $(STREAMS_CASES))

out-of-core: $(PIPELINE_STEPS) $(PY_READY)
	$(OTHER_KINDS) out-of-core --results $(RESULTS) --shape $(OUT_OF_CORE_SHAPE) \
	  --device-mem $(OUT_OF_CORE_DEVICE_MEM)

# Not a step: the bus without the transpose, to tell the pipeline's losses from the bus's.
BUS_PROBE := build/bus_probe
BUS_PROBE_ARCH := $(shell nvidia-smi > /dev/null 2>&1 && echo -arch=native)
$(BUS_PROBE): tools/bus_probe.cu common/host_memory.cpp $(wildcard common/*.cuh common/*.hpp)
	@mkdir -p build
	$(if $(NVCC),@$(NVCC) -O3 -std=c++17 $(BUS_PROBE_ARCH) -o $@ $(filter %.cu %.cpp,$^) \
	  && echo "  $@: built",@echo "nvcc not found: $@ is not built" >&2; exit 1)

bus-probe: $(BUS_PROBE)
	@mkdir -p $(RESULTS)
	$(BUS_PROBE) --csv $(RESULTS)/bus_probe.csv $(BUS_PROBE_ARGS) || [ $$? -eq 77 ]

multigpu: $(DISTRIBUTED_STEPS) $(LAST_STEP) $(PY_READY)
	$(OTHER_KINDS) multigpu --results $(RESULTS) --sizes $(MULTIGPU_SIZES) \
	  --dtypes $(MULTIGPU_DTYPES) $(if $(MULTIGPU_GPUS),--gpu-counts $(MULTIGPU_GPUS)) \
	  --exchanges $(MULTIGPU_EXCHANGES) --modes $(MULTIGPU_MODES) $(if $(REPS),--reps $(REPS))
	@if [ -f $(RESULTS)/multigpu.csv ]; then $(PY) -m transpose_lab.plot_multigpu \
	  --csv $(RESULTS)/multigpu.csv --out $(RESULTS)/multigpu.png --table $(RESULTS)/multigpu.md; fi

# A step with one constant changed, measured against it (transpose_lab/probes.py lists them).
PROBE_SHAPE ?= 8191x8193
PROBE_DTYPES ?=
probes: $(LAST_STEP) CUDA.cublas $(PY_READY)
	$(PY) -m transpose_lab.probes --shape $(PROBE_SHAPE) --results $(RESULTS) \
	  $(if $(PROBES),--probes $(PROBES)) $(if $(PROBE_DTYPES),--dtypes $(PROBE_DTYPES))

# Every type by default: each takes its own path through a kernel. The runs share the GPU 8 at once.
SANITIZE_STEPS ?= $(LAST_STEP) $(PIPELINE_STEPS)
SANITIZE_DTYPES ?=
sanitize: $(SANITIZE_STEPS) $(PY_READY)
	@$(PY) -m transpose_lab.sanitize $(SANITIZE_STEPS) --log $(RESULTS)/sanitizer.log \
	  $(if $(SANITIZE_DTYPES),--dtypes $(SANITIZE_DTYPES)) || [ $$? -eq 77 ]

profile: all $(PY_READY)
	@mkdir -p $(RESULTS)
	$(PY) -m transpose_lab.ncu_profile --steps $(CUDA_STEPS) $(REFERENCE_STEPS) \
	  --size $(PROFILE_SIZE) $(if $(PROFILE_COLS),--cols $(PROFILE_COLS)) $(DTYPE_ARG) \
	  --csv $(RESULTS)/profile.csv

# Chapter 3: every permutation step on the named cases, each type (transpose_lab/permute_cases.py),
# and the PyTorch row, run by TORCH_PYTHON (skipped in one line without torch or a GPU).
PERMUTE_DTYPES ?= float32 uint8
permute: $(if $(NVCC),$(PERMUTE_STEPS),$(PERMUTE_CPU_STEPS)) $(PY_READY)
	$(OMP_PIN) $(PY) -m transpose_lab.permute_cases --steps $(PERMUTE_STEPS) \
	  --dtypes $(PERMUTE_DTYPES) $(if $(REPS),--reps $(REPS)) --torch-python $(TORCH_PYTHON) \
	  --csv $(RESULTS)/permute.csv
	@if [ -f $(RESULTS)/permute.csv ]; then $(PY) -m transpose_lab.plot_permute \
	  --csv $(RESULTS)/permute.csv --out $(RESULTS)/permute.png; fi

plots: $(PY_READY)
	$(PY) -m transpose_lab.make_plots --results $(RESULTS)

texts: $(PY_READY)
	$(PY) -m transpose_lab.texts

texts-check: $(PY_READY)
	$(PY) -m transpose_lab.texts --check

reference: $(PY_READY)
	$(PY) -m transpose_lab.reference $(if $(PART),--part $(PART)) \
	  $(if $(MACHINE),--machine $(MACHINE)) $(if $(DRY_RUN),--dry-run)

tests-build:
	@$(MAKE) --no-print-directory -C tests

# The programs the tests start run make themselves: this make's job-server settings stay here.
NO_MAKE_ENV := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL
# The tests run side by side on every core where pytest-xdist is installed (requirements.txt has
# it; a machine whose own python3 lacks it runs them one after another). Without a GPU each file
# goes to one worker (its probes are built once); with one, the tests spread one by one, since
# most of them wait on the GPU, and they check results, never speed (several GPUs: each worker
# starts its programs on its own); the tests marked large_memory start first, only as many at a
# time as the machine's memory holds, each slot's share on one worker (tests/conftest.py).
TEST_WORKERS = $$($(PY) -c 'import xdist' 2>/dev/null && echo '-n auto --dist \
  $(if $(NO_GPU_HERE),loadfile,loadgroup)')
NO_GPU_HERE = $(if $(shell nvidia-smi -L 2>/dev/null | grep -m1 GPU),,yes)
test: all tests-build $(if $(NVCC),$(BUS_PROBE)) $(PY_READY)
	@$(NO_MAKE_ENV) $(PY) -m pytest tests $(TEST_WORKERS)

# make diff STEP=CUDA.v4: the lesson of a step, as a diff of its code against the step before it
# (the header printed once, apart; variants.cu and the step's other sources included).
diff: $(PY_READY)
	@$(PY) -m transpose_lab.step_diff $(STEP)

# The lab as a course: exercises generated from the steps' lesson markers, and the grader.
.PHONY: exercises check
exercises: $(PY_READY)
	$(PY) -m transpose_lab.exercises $(if $(FORCE),--force)

# Exits 0 when every check passed, and when a CUDA step is skipped without a GPU: the grader says
# so in one line and exits 77, and make, which can only exit 0 or 2, must not print an error for it.
check: $(PY_READY)
	@$(NO_MAKE_ENV) $(PY) -m transpose_lab.grader $(STEP) $(if $(FROM),--from $(FROM)) \
	  $(if $(FULL),--full) $(if $(CUDA_ARCH),--cuda-arch "$(CUDA_ARCH)") || [ $$? -eq 77 ]

format:
	clang-format -i common/*.cpp common/*.hpp common/*.cu common/*.cuh */transpose.c* */variants.cu \
	  tests/*.cpp

clean:
	@for step in $(ALL_STEPS); do $(MAKE) --no-print-directory -C $$step clean; done
	@rm -rf common/.build
	@$(MAKE) --no-print-directory -C tests clean
	rm -rf results build

# For the tests: `make -s print-CUDA_STEPS` prints a list, so the lists stay written once.
print-%:
	@echo $($*)

# The compilers and their flags, written once for every step: included by common/step.mk (the
# matrix steps) and common/permute_step.mk (chapter 3). A file that includes this one may set
# NVCC_HOST_WARNINGS first (host warnings for nvcc's host compiler).

# Quiet by default: one line per step built; V=1 prints every compiler command.
Q := $(if $(filter 1,$(V)),,@)
BUILT_LINE = @echo "  $(STEP_NAME): built"
# Each object also depends on every file its compile read (a step that includes another step's
# source, v6's in v7's ragged.cu): the compilers write the list, make reads it on the next run.
DEPFLAGS = -MMD -MP

CXX ?= g++
HOST_ARCH ?= -march=native
CXXFLAGS ?= -O3 $(HOST_ARCH) -std=c++17 -Wall -Wextra
OPENMP_FLAGS := -fopenmp
# `make checked` in a CPU step: the program again, every source (the harness's too) compiled with
# AddressSanitizer and UndefinedBehaviorSanitizer (the first report ends the run) and glibc's
# strictest buffer checks, which some hosts' compilers apply by default. tests/test_cpu_checked.py
# runs it on small shapes of every path. -O1 builds in less than half -O3's time, and its buffer
# checks still stop a pointer that leaves its array (CPU.omp's stage, walked from before its start).
CHECK_FLAGS ?= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
  -fno-sanitize-recover=all -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3
CHECKED := $(BUILD_DIR)/transpose_checked

NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
# Build for the GPU that is present (its architecture only); without one (CI, a laptop), for one
# architecture plus its PTX, which the driver compiles for any newer GPU at the first launch (T4 is
# 75; CUDA 13 builds nothing older). Every further architecture costs a whole device compile of
# every kernel, so the portable list is asked for by name: `make CUDA_ARCH="75 80 86 89 90"`.
# Expanded where used: a CPU step never asks nvidia-smi.
DEFAULT_CUDA_ARCH := 75
CUDA_ARCH ?= $(or $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null \
                 | head -n1 | tr -d '. '),$(DEFAULT_CUDA_ARCH))
NEWEST_ARCH = $(lastword $(sort $(CUDA_ARCH)))
GENCODE = $(foreach a,$(CUDA_ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
          -gencode arch=compute_$(NEWEST_ARCH),code=compute_$(NEWEST_ARCH)
NVCC_HOST_FLAGS = -O3 -std=c++17 \
  -Xcompiler "$(HOST_ARCH) $(OPENMP_FLAGS)$(if $(NVCC_HOST_WARNINGS), $(NVCC_HOST_WARNINGS))"
NVCCFLAGS ?= -lineinfo $(GENCODE) $(NVCC_HOST_FLAGS)

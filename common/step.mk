# Shared build rules for every step. A step's Makefile is `include ../common/step.mk` (plus
# STEP_LDLIBS if it links a library); the step's language follows from its source file:
# transpose.cpp is a CPU step, transpose.cu a CUDA step. `make` in a step builds ./transpose.

STEP_NAME := $(notdir $(CURDIR))
COMMON_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
BUILD_DIR := .build

CXX ?= g++
HOST_ARCH ?= -march=native
CXXFLAGS ?= -O3 $(HOST_ARCH) -std=c++17 -Wall -Wextra
OPENMP_FLAGS := -fopenmp
STEP_DEFINES := -DSTEP_NAME='"$(STEP_NAME)"'

# The harness: written once in common/, linked into every step.
HOST_SOURCES := cli.cpp matrix.cpp host_memory.cpp report.cpp
HOST_OBJECTS := $(addprefix $(BUILD_DIR)/,$(HOST_SOURCES:.cpp=.o))
HEADERS := $(wildcard $(COMMON_DIR)/*.hpp $(COMMON_DIR)/*.cuh)

.PHONY: all clean
all: transpose

$(BUILD_DIR)/%.o: $(COMMON_DIR)/%.cpp $(HEADERS) | $(BUILD_DIR)
	$(CXX) $(CXXFLAGS) $(OPENMP_FLAGS) -c $< -o $@

$(BUILD_DIR):
	mkdir -p $@

ifneq ($(wildcard transpose.cpp),)
# ---- CPU step ----
transpose: transpose.cpp $(COMMON_DIR)/cpu_driver.cpp $(HOST_OBJECTS) $(HEADERS)
	$(CXX) $(CXXFLAGS) $(OPENMP_FLAGS) $(STEP_DEFINES) transpose.cpp $(COMMON_DIR)/cpu_driver.cpp \
	  $(HOST_OBJECTS) -o $@ $(STEP_LDLIBS)
else
# ---- CUDA step ----
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
# Build for the GPU that is present; without one (CI, a laptop), for the common architectures of
# the last few generations (T4 75, A100 80, RTX 30 86, RTX 40 89, H100 90) plus PTX for newer ones.
# Override with e.g. `make CUDA_ARCH=86`.
DEFAULT_CUDA_ARCH := 75 80 86 89 90
CUDA_ARCH ?= $(or $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null \
                 | head -n1 | tr -d '. '),$(DEFAULT_CUDA_ARCH))
NEWEST_ARCH := $(lastword $(sort $(CUDA_ARCH)))
GENCODE := $(foreach a,$(CUDA_ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
           -gencode arch=compute_$(NEWEST_ARCH),code=compute_$(NEWEST_ARCH)
NVCC_HOST_FLAGS := -O3 -std=c++17 -Xcompiler "$(HOST_ARCH) $(OPENMP_FLAGS)"
NVCCFLAGS ?= -lineinfo $(GENCODE) $(NVCC_HOST_FLAGS)

ifeq ($(NVCC),)
transpose:
	@echo "$(STEP_NAME): nvcc not found: install the CUDA toolkit or pass NVCC=/path/to/nvcc" >&2
	@exit 1
else
$(BUILD_DIR)/kernel.o: transpose.cu $(HEADERS) | $(BUILD_DIR)
	$(NVCC) $(NVCCFLAGS) $(STEP_DEFINES) -c transpose.cu -o $@

# The driver holds no kernels: compiled once, not once per architecture.
$(BUILD_DIR)/cuda_driver.o: $(COMMON_DIR)/cuda_driver.cu $(HEADERS) | $(BUILD_DIR)
	$(NVCC) $(NVCC_HOST_FLAGS) $(STEP_DEFINES) -c $< -o $@

transpose: $(BUILD_DIR)/kernel.o $(BUILD_DIR)/cuda_driver.o $(HOST_OBJECTS)
	$(NVCC) $(NVCCFLAGS) $^ -o $@ -lgomp $(STEP_LDLIBS)
endif
endif

clean:
	rm -rf $(BUILD_DIR) transpose

# Shared build rules for every step. A step's Makefile declares its kind in one line and includes
# this file:
#   STEP_KIND := kernel          cpu | kernel | host_pipeline | distributed: which driver owns main()
#   STEP_DTYPES := float32 ...   optional: the element types it supports (default: every one)
#   STEP_LDLIBS := -lcublas      optional: libraries it links
#   STEP_OPERATION := copy       optional, kernel steps: what the driver verifies (default
#                                transpose; copy: out == in, rows x cols, for the copy reference)
#   include ../common/step.mk
# `make` in a step builds ./transpose; `make diff` shows what it changed against the step before.

STEP_NAME := $(notdir $(CURDIR))
ifeq ($(STEP_KIND),)
  $(error $(STEP_NAME)/Makefile must set STEP_KIND (cpu, kernel, host_pipeline or distributed))
endif
ALL_DTYPES := $(shell sed -n 's/^LAB_DTYPE.\([a-z0-9]*\),.*/\1/p' $(dir $(lastword $(MAKEFILE_LIST)))dtypes.def)
STEP_DTYPES ?= $(ALL_DTYPES)
COMMON_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
BUILD_DIR := .build

CXX ?= g++
HOST_ARCH ?= -march=native
CXXFLAGS ?= -O3 $(HOST_ARCH) -std=c++17 -Wall -Wextra
OPENMP_FLAGS := -fopenmp
ifneq ($(filter-out $(ALL_DTYPES),$(STEP_DTYPES)),)
  $(error $(STEP_NAME): unknown STEP_DTYPES '$(filter-out $(ALL_DTYPES),$(STEP_DTYPES))')
endif
STEP_OPERATION ?= transpose
ifeq ($(filter transpose copy,$(STEP_OPERATION)),)
  $(error $(STEP_NAME): unknown STEP_OPERATION '$(STEP_OPERATION)' (transpose or copy))
endif
ifeq ($(STEP_OPERATION),copy)
  ifneq ($(STEP_KIND),kernel)
    $(error $(STEP_NAME): STEP_OPERATION := copy needs STEP_KIND := kernel (its driver verifies copies))
  endif
endif
# The list reaches the program only when it is not every type (empty: every type).
STEP_DEFINES := -DSTEP_NAME='"$(STEP_NAME)"' -DSTEP_KIND='"$(STEP_KIND)"' \
  -DSTEP_DTYPES='"$(if $(filter-out $(STEP_DTYPES),$(ALL_DTYPES)),$(STEP_DTYPES))"' \
  -DSTEP_OPERATION='"$(STEP_OPERATION)"'

# The harness: written once in common/, linked into every step.
HOST_SOURCES := cli.cpp dtype.cpp matrix.cpp host_memory.cpp report.cpp
HOST_OBJECTS := $(addprefix $(BUILD_DIR)/,$(HOST_SOURCES:.cpp=.o))
HEADERS := $(wildcard $(COMMON_DIR)/*.hpp $(COMMON_DIR)/*.cuh *.cuh)

.PHONY: all clean diff
all: transpose

$(BUILD_DIR)/%.o: $(COMMON_DIR)/%.cpp $(HEADERS) | $(BUILD_DIR)
	$(CXX) $(CXXFLAGS) $(OPENMP_FLAGS) -c $< -o $@

$(BUILD_DIR):
	mkdir -p $@

ifeq ($(STEP_KIND),cpu)
# ---- CPU step: transpose.cpp ----
transpose: transpose.cpp $(COMMON_DIR)/cpu_driver.cpp $(HOST_OBJECTS) $(HEADERS)
	$(CXX) $(CXXFLAGS) $(OPENMP_FLAGS) $(STEP_DEFINES) transpose.cpp $(COMMON_DIR)/cpu_driver.cpp \
	  $(HOST_OBJECTS) -o $@ $(STEP_LDLIBS)
else
# ---- CUDA steps: transpose.cu, with the driver of their kind ----
# The kernel driver serves every kernel step and lives in common/; the host-pipeline and the
# distributed drivers are the lessons of the steps that own them and live in their folders.
CUDA_DRIVER_kernel := $(COMMON_DIR)/cuda_driver.cu
CUDA_DRIVER_host_pipeline := pipeline_driver.cu
CUDA_DRIVER_distributed := distributed_driver.cu
CUDA_DRIVER := $(CUDA_DRIVER_$(STEP_KIND))
ifeq ($(CUDA_DRIVER),)
  $(error $(STEP_NAME): unknown STEP_KIND '$(STEP_KIND)' (cpu, kernel, host_pipeline or distributed))
endif
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
ifeq ($(STEP_KIND),kernel)
# The step's templates compiled once per element size: common/step_instances.cu includes
# transpose.cu and instantiates the launcher for 1-, 2-, 4-, 8- and 16-byte storage types.
$(BUILD_DIR)/kernel.o: transpose.cu $(wildcard variants.cu) $(COMMON_DIR)/step_instances.cu \
                       $(HEADERS) | $(BUILD_DIR)
	$(NVCC) $(NVCCFLAGS) $(STEP_DEFINES) -I. -c $(COMMON_DIR)/step_instances.cu -o $@
STEP_OBJECTS := $(BUILD_DIR)/kernel.o
else
# host_pipeline and distributed steps: transpose.cu is the step's own lesson (pieces, streams, the
# exchange); the kernel it runs is a kernel step's launcher, linked, not copied:
#   STEP_KERNEL := CUDA.v6_locality
$(BUILD_DIR)/step.o: transpose.cu $(HEADERS) | $(BUILD_DIR)
	$(NVCC) $(NVCCFLAGS) $(STEP_DEFINES) $(STEP_DRIVER_FLAGS) -I$(COMMON_DIR) -c transpose.cu -o $@
STEP_OBJECTS := $(BUILD_DIR)/step.o
ifneq ($(STEP_KERNEL),)
KERNEL_DIR := $(COMMON_DIR)/../$(STEP_KERNEL)
# Renamed so that the kernel step's summary does not collide with this step's own.
$(BUILD_DIR)/reused_kernel.o: $(KERNEL_DIR)/transpose.cu $(wildcard $(KERNEL_DIR)/variants.cu) \
                              $(COMMON_DIR)/step_instances.cu \
                              $(HEADERS) | $(BUILD_DIR)
	$(NVCC) $(NVCCFLAGS) -DkStepSummary=kReusedKernelSummary -I$(KERNEL_DIR) \
	  -c $(COMMON_DIR)/step_instances.cu -o $@
STEP_OBJECTS += $(BUILD_DIR)/reused_kernel.o
endif
endif

# The driver holds no kernels: compiled once, not once per architecture.
$(BUILD_DIR)/driver.o: $(CUDA_DRIVER) $(HEADERS) | $(BUILD_DIR)
	$(NVCC) $(NVCC_HOST_FLAGS) $(STEP_DEFINES) $(STEP_DRIVER_FLAGS) -I$(COMMON_DIR) -c $< -o $@

transpose: $(STEP_OBJECTS) $(BUILD_DIR)/driver.o $(HOST_OBJECTS)
	$(NVCC) $(NVCCFLAGS) $^ -o $@ -lgomp $(STEP_LDLIBS)
endif
endif

clean:
	rm -rf $(BUILD_DIR) transpose

# From inside a step folder: the same as `make diff STEP=<this step>` at the top.
diff:
	@$(MAKE) --no-print-directory -C $(CURDIR)/.. diff STEP=$(STEP_NAME)

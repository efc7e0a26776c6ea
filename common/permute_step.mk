# Build rules for the steps of chapter 3 (N-d permutations). A step's Makefile declares its kind
# in one line and includes this file:
#   STEP_KIND := permute_cpu     permute_cpu | permute_kernel: which driver owns main()
#                                (common/permute_cpu_driver.cpp or common/permute_cuda_driver.cu)
#   include ../common/permute_step.mk
# The step's transpose.cpp (or .cu) holds its lesson only: permute_on_cpu (or launch_permute) of
# common/permute_step.hpp. `make` builds ./transpose and says so in one line (V=1: the commands).
# The compilers and flags are the matrix steps' (common/step.mk).

STEP_NAME := $(notdir $(CURDIR))
COMMON_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
BUILD_DIR := .build
Q := $(if $(filter 1,$(V)),,@)
BUILT_LINE = @echo "  $(STEP_NAME): built"
DEPFLAGS = -MMD -MP

CXX ?= g++
HOST_ARCH ?= -march=native
CXXFLAGS ?= -O3 $(HOST_ARCH) -std=c++17 -Wall -Wextra
OPENMP_FLAGS := -fopenmp
STEP_DEFINES := -DSTEP_NAME='"$(STEP_NAME)"'

# The harness: the shared one and the chapter's problem (common/permute.cpp).
HOST_SOURCES := dtype.cpp matrix.cpp host_memory.cpp report.cpp permute.cpp
HOST_OBJECTS := $(addprefix $(BUILD_DIR)/,$(HOST_SOURCES:.cpp=.o))
HEADERS := $(wildcard $(COMMON_DIR)/*.hpp $(COMMON_DIR)/*.cuh)

.PHONY: all clean diff
all: transpose
	@:  # up to date says nothing (make would print 'Nothing to be done')

$(BUILD_DIR)/%.o: $(COMMON_DIR)/%.cpp $(HEADERS) | $(BUILD_DIR)
	$(Q)$(CXX) $(CXXFLAGS) $(OPENMP_FLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD_DIR):
	$(Q)mkdir -p $@

ifeq ($(STEP_KIND),permute_cpu)
$(BUILD_DIR)/step.o: transpose.cpp $(COMMON_DIR)/permute_instances.cpp $(HEADERS) | $(BUILD_DIR)
	$(Q)$(CXX) $(CXXFLAGS) $(OPENMP_FLAGS) $(STEP_DEFINES) $(DEPFLAGS) -I. -I$(COMMON_DIR) \
	  -c $(COMMON_DIR)/permute_instances.cpp -o $@
$(BUILD_DIR)/driver.o: $(COMMON_DIR)/permute_cpu_driver.cpp $(HEADERS) | $(BUILD_DIR)
	$(Q)$(CXX) $(CXXFLAGS) $(OPENMP_FLAGS) $(STEP_DEFINES) $(DEPFLAGS) -c $< -o $@
transpose: $(BUILD_DIR)/step.o $(BUILD_DIR)/driver.o $(HOST_OBJECTS)
	$(Q)$(CXX) $(CXXFLAGS) $(OPENMP_FLAGS) $^ -o $@
	$(BUILT_LINE)
else ifeq ($(STEP_KIND),permute_kernel)
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
# As common/step.mk: the GPU that is present, else one architecture plus its PTX.
DEFAULT_CUDA_ARCH := 75
CUDA_ARCH ?= $(or $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null \
                 | head -n1 | tr -d '. '),$(DEFAULT_CUDA_ARCH))
NEWEST_ARCH := $(lastword $(sort $(CUDA_ARCH)))
GENCODE := $(foreach a,$(CUDA_ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
           -gencode arch=compute_$(NEWEST_ARCH),code=compute_$(NEWEST_ARCH)
NVCC_HOST_FLAGS := -O3 -std=c++17 -Xcompiler "$(HOST_ARCH) $(OPENMP_FLAGS) -Wall -Wextra"
NVCCFLAGS ?= -lineinfo $(GENCODE) $(NVCC_HOST_FLAGS)
ifeq ($(NVCC),)
transpose:
	@echo "$(STEP_NAME): nvcc not found: install the CUDA toolkit or pass NVCC=/path/to/nvcc" >&2
	@exit 1
else
$(BUILD_DIR)/step.o: transpose.cu $(COMMON_DIR)/permute_instances.cu $(HEADERS) | $(BUILD_DIR)
	$(Q)$(NVCC) $(NVCCFLAGS) $(STEP_DEFINES) $(DEPFLAGS) -I. -I$(COMMON_DIR) \
	  -c $(COMMON_DIR)/permute_instances.cu -o $@
# The driver holds no kernels: compiled once, not once per architecture.
$(BUILD_DIR)/driver.o: $(COMMON_DIR)/permute_cuda_driver.cu $(HEADERS) | $(BUILD_DIR)
	$(Q)$(NVCC) $(NVCC_HOST_FLAGS) $(STEP_DEFINES) $(DEPFLAGS) -I$(COMMON_DIR) -c $< -o $@
transpose: $(BUILD_DIR)/step.o $(BUILD_DIR)/driver.o $(HOST_OBJECTS)
	$(Q)$(NVCC) $(NVCCFLAGS) $^ -o $@ -lgomp
	$(BUILT_LINE)
endif
else
  $(error $(STEP_NAME)/Makefile must set STEP_KIND to permute_cpu or permute_kernel)
endif

-include $(wildcard $(BUILD_DIR)/*.d)

clean:
	$(Q)rm -rf $(BUILD_DIR) transpose

# From inside a step folder: the same as `make diff STEP=<this step>` at the top.
diff:
	@$(MAKE) --no-print-directory -C $(CURDIR)/.. diff STEP=$(STEP_NAME)

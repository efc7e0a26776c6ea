# Shared build rules for every step. A step's Makefile declares its kind in one line and includes
# this file:
#   STEP_KIND := kernel          cpu | kernel | host_pipeline | distributed: which driver owns main()
#   STEP_DTYPES := float32 ...   optional: the element types it supports (default: every one)
#   STEP_LDLIBS := -lcublas      optional: libraries it links
#   STEP_OPERATION := copy       optional, kernel steps: what the driver verifies (default
#                                transpose; copy: out == in, rows x cols, for the copy reference)
#   include ../common/step.mk
# `make` in a step builds ./transpose and says so in one line (`make V=1` shows the commands);
# `make diff` shows what it changed against the step before.

STEP_NAME := $(notdir $(CURDIR))
ifeq ($(STEP_KIND),)
  $(error $(STEP_NAME)/Makefile must set STEP_KIND (cpu, kernel, host_pipeline or distributed))
endif
ALL_DTYPES := $(shell sed -n 's/^LAB_DTYPE.\([a-z0-9]*\),.*/\1/p' $(dir $(lastword $(MAKEFILE_LIST)))dtypes.def)
STEP_DTYPES ?= $(ALL_DTYPES)
COMMON_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
BUILD_DIR := .build
include $(COMMON_DIR)/toolchain.mk
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
# The last step of the progression (the top Makefile's CUDA_STEPS): the step a launcher's refusal of
# a shape past its grid points to (common/grid_limits.cuh).
LAB_LAST_STEP ?= $(lastword $(shell sed -n 's/^CUDA_STEPS *:= *//p' $(COMMON_DIR)/../Makefile))
# The list reaches the program only when it is not every type (empty: every type).
STEP_DEFINES := -DSTEP_NAME='"$(STEP_NAME)"' -DSTEP_KIND='"$(STEP_KIND)"' \
  -DSTEP_DTYPES='"$(if $(filter-out $(STEP_DTYPES),$(ALL_DTYPES)),$(STEP_DTYPES))"' \
  -DSTEP_OPERATION='"$(STEP_OPERATION)"' -DLAB_LAST_STEP='"$(LAB_LAST_STEP)"'

# The harness: written once in common/, compiled once (common/host_objects.mk), linked into every
# step.
HOST_SOURCES := cli.cpp dtype.cpp matrix.cpp host_memory.cpp report.cpp
# Objects in the step's own build that hold nothing of its source (the driver, below): `make
# exercises` seeds an exercise's build with the solution's, so that a student's first `make`
# compiles the lesson alone (the harness's objects are shared already).
LESSON_FREE_OBJECTS :=
HEADERS := $(wildcard $(COMMON_DIR)/*.hpp $(COMMON_DIR)/*.cuh *.cuh)

.PHONY: all clean diff
all: transpose
	@:  # up to date says nothing (make would print 'Nothing to be done')

include $(COMMON_DIR)/host_objects.mk  # after `all`, the default goal

$(BUILD_DIR):
	$(Q)mkdir -p $@

ifeq ($(STEP_KIND),cpu)
# ---- CPU step: transpose.cpp ----
transpose: transpose.cpp $(COMMON_DIR)/cpu_driver.cpp $(HOST_OBJECTS) $(HEADERS)
	$(Q)$(CXX) $(CXXFLAGS) $(OPENMP_FLAGS) $(STEP_DEFINES) transpose.cpp $(COMMON_DIR)/cpu_driver.cpp \
	  $(HOST_OBJECTS) -o $@ $(STEP_LDLIBS)
	$(BUILT_LINE)
.PHONY: checked
checked: $(CHECKED)
$(CHECKED): transpose.cpp $(COMMON_DIR)/cpu_driver.cpp $(HOST_SOURCES:%=$(COMMON_DIR)/%) $(HEADERS) \
    | $(BUILD_DIR)
	$(Q)$(CXX) $(CXXFLAGS) $(CHECK_FLAGS) $(OPENMP_FLAGS) $(STEP_DEFINES) transpose.cpp \
	  $(COMMON_DIR)/cpu_driver.cpp $(HOST_SOURCES:%=$(COMMON_DIR)/%) -o $@ $(STEP_LDLIBS)
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
	$(Q)$(NVCC) $(NVCCFLAGS) $(STEP_DEFINES) $(DEPFLAGS) -I. -c $(COMMON_DIR)/step_instances.cu -o $@
STEP_OBJECTS := $(BUILD_DIR)/kernel.o
else
# host_pipeline and distributed steps: transpose.cu is the step's own lesson (pieces, streams, the
# exchange); the kernel it runs is a kernel step's launcher (STEP_KERNEL below).
$(BUILD_DIR)/step.o: transpose.cu $(HEADERS) | $(BUILD_DIR)
	$(Q)$(NVCC) $(NVCCFLAGS) $(STEP_DEFINES) $(STEP_DRIVER_FLAGS) $(DEPFLAGS) -I$(COMMON_DIR) \
	  -c transpose.cu -o $@
STEP_OBJECTS := $(BUILD_DIR)/step.o
endif

# A step that runs another step's launcher (STEP_KERNEL := CUDA.v7_packed) links that step's
# kernel.o (common/reused_kernel.mk). It defines the kernel step's summary and variant table under
# the names this step's own use: the copy renames them, and the step's driver reaches them as
# kReusedKernelSummary and so on.
ifneq ($(STEP_KERNEL),)
KERNEL_OBJECT_NAME := kernel.o
RENAME_FLAGS := $(addprefix --redefine-sym ,kStepSummary=kReusedKernelSummary \
  kKernelVariants=kReusedKernelVariants kKernelVariantCount=kReusedKernelVariantCount)
include $(COMMON_DIR)/reused_kernel.mk
endif

# The driver holds no kernels: compiled once, not once per architecture.
LESSON_FREE_OBJECTS += $(BUILD_DIR)/driver.o
$(BUILD_DIR)/driver.o: $(CUDA_DRIVER) $(HEADERS) | $(BUILD_DIR)
	$(Q)$(NVCC) $(NVCC_HOST_FLAGS) $(STEP_DEFINES) $(STEP_DRIVER_FLAGS) $(DEPFLAGS) -I$(COMMON_DIR) \
	  -c $< -o $@

transpose: $(STEP_OBJECTS) $(BUILD_DIR)/driver.o $(HOST_OBJECTS)
	$(Q)$(NVCC) $(NVCCFLAGS) $^ -o $@ -lgomp $(STEP_LDLIBS)
	$(BUILT_LINE)
endif
endif

-include $(wildcard $(BUILD_DIR)/*.d)

clean:
	$(Q)rm -rf $(BUILD_DIR) transpose

# From inside a step folder: the same as `make diff STEP=<this step>` at the top.
diff:
	@$(MAKE) --no-print-directory -C $(CURDIR)/.. diff STEP=$(STEP_NAME)

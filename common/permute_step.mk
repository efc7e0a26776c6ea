# Build rules for the steps of chapter 3 (N-d permutations). A step's Makefile declares its kind
# in one line and includes this file:
#   STEP_KIND := permute_cpu     permute_cpu | permute_kernel: which driver owns main()
#                                (common/permute_cpu_driver.cpp or common/permute_cuda_driver.cu)
#   include ../common/permute_step.mk
# The step's transpose.cpp (or .cu) holds its lesson only: permute_on_cpu (or launch_permute) of
# common/permute_step.hpp. `make` builds ./transpose and says so in one line (V=1: the commands).
# The compilers and flags are the matrix steps' (common/toolchain.mk), with host warnings for nvcc.

STEP_NAME := $(notdir $(CURDIR))
COMMON_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
BUILD_DIR := .build
NVCC_HOST_WARNINGS := -Wall -Wextra
include $(COMMON_DIR)/toolchain.mk
STEP_DEFINES := -DSTEP_NAME='"$(STEP_NAME)"'

# The harness: the shared one and the chapter's problem (common/permute.cpp).
HOST_SOURCES := cli.cpp dtype.cpp matrix.cpp host_memory.cpp report.cpp permute.cpp
HEADERS := $(wildcard $(COMMON_DIR)/*.hpp $(COMMON_DIR)/*.cuh)

.PHONY: all clean diff
all: transpose
	@:  # up to date says nothing (make would print 'Nothing to be done')

include $(COMMON_DIR)/host_objects.mk  # after `all`, the default goal

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
.PHONY: checked
checked: $(CHECKED)
$(CHECKED): transpose.cpp $(COMMON_DIR)/permute_instances.cpp $(COMMON_DIR)/permute_cpu_driver.cpp \
    $(HOST_SOURCES:%=$(COMMON_DIR)/%) $(HEADERS) | $(BUILD_DIR)
	$(Q)$(CXX) $(CXXFLAGS) $(CHECK_FLAGS) $(OPENMP_FLAGS) $(STEP_DEFINES) -I. -I$(COMMON_DIR) \
	  $(COMMON_DIR)/permute_instances.cpp $(COMMON_DIR)/permute_cpu_driver.cpp \
	  $(HOST_SOURCES:%=$(COMMON_DIR)/%) -o $@
else ifeq ($(STEP_KIND),permute_kernel)
ifeq ($(NVCC),)
transpose:
	@echo "$(STEP_NAME): nvcc not found: install the CUDA toolkit or pass NVCC=/path/to/nvcc" >&2
	@exit 1
else
$(BUILD_DIR)/step.o: transpose.cu $(COMMON_DIR)/permute_instances.cu $(HEADERS) | $(BUILD_DIR)
	$(Q)$(NVCC) $(NVCCFLAGS) $(STEP_DEFINES) $(DEPFLAGS) -I. -I$(COMMON_DIR) \
	  -c $(COMMON_DIR)/permute_instances.cu -o $@
STEP_OBJECTS := $(BUILD_DIR)/step.o
# A step that hands some problems to an earlier step's launcher (STEP_KERNEL := PERMUTE.v3_tiled)
# links that step's step.o (common/reused_kernel.mk). Its launch_permute and kStepSummary are
# renamed in the copy: each instance's mangled name, _Z14launch_permuteI..., becomes
# _Z21launch_reused_permuteI..., which the step calls. Both objects are made from
# permute_instances.cu, and nvcc gives a file's anonymous namespace a global name made from the
# file's: the copy's are made local, so that the two steps' helpers (blocks_for) never meet.
ifneq ($(STEP_KERNEL),)
KERNEL_OBJECT_NAME := step.o
NM ?= nm
RENAME_FLAGS = --wildcard --localize-symbol='_ZN*_GLOBAL__N_*' \
  --redefine-sym kStepSummary=kReusedKernelSummary $$($(NM) --defined-only $< | \
  sed -n 's/^.* _Z14launch_permute\(I.*\)$$/--redefine-sym _Z14launch_permute\1=_Z21launch_reused_permute\1/p') \
  $$($(NM) --undefined-only $< | sed -n '$(EARLIER_RENAME)')
include $(COMMON_DIR)/reused_kernel.mk
# The kernel step may hand problems on in turn (STEP_KERNEL := PERMUTE.v4_small_planes, which
# links PERMUTE.v3_tiled): its own copy, reused_kernel.o, is linked too. The kernel step calls it
# as launch_reused_permute, the name its copy here now defines: so in both objects the calls and
# the definitions of that earlier launcher become _Z22launch_earlier_permuteI... (objcopy maps
# each symbol by the name it had, so the two renames in the kernel step's copy do not chain).
EARLIER_RENAME = s/^.* _Z21launch_reused_permute\(I.*\)$$/--redefine-sym _Z21launch_reused_permute\1=_Z22launch_earlier_permute\1/p
EARLIER_KERNEL := $(shell sed -n 's/^STEP_KERNEL *:= *//p' $(KERNEL_DIR)/Makefile)
ifneq ($(EARLIER_KERNEL),)
KERNEL_GOALS := $(BUILD_DIR)/$(KERNEL_OBJECT_NAME) $(BUILD_DIR)/reused_kernel.o
EARLIER_OBJECT := $(KERNEL_DIR)/$(BUILD_DIR)/reused_kernel.o
$(EARLIER_OBJECT): $(KERNEL_OBJECT)  # made by the same make of the kernel step
	@:
$(BUILD_DIR)/earlier_kernel.o: $(EARLIER_OBJECT) | $(BUILD_DIR)
	$(Q)$(OBJCOPY) --redefine-sym kReusedKernelSummary=kEarlierKernelSummary \
	  $$($(NM) --defined-only $< | sed -n '$(EARLIER_RENAME)') $< $@
STEP_OBJECTS += $(BUILD_DIR)/earlier_kernel.o
endif
endif
# The driver holds no kernels: compiled once, not once per architecture.
$(BUILD_DIR)/driver.o: $(COMMON_DIR)/permute_cuda_driver.cu $(HEADERS) | $(BUILD_DIR)
	$(Q)$(NVCC) $(NVCC_HOST_FLAGS) $(STEP_DEFINES) $(DEPFLAGS) -I$(COMMON_DIR) -c $< -o $@
transpose: $(STEP_OBJECTS) $(BUILD_DIR)/driver.o $(HOST_OBJECTS)
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

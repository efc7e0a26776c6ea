# A step that runs another step's launcher (STEP_KERNEL := CUDA.v7_packed, or PERMUTE.v3_tiled)
# links the object that step built (KERNEL_OBJECT_NAME in its .build), compiled once for both. The
# kernel step is asked to bring it up to date (FORCE: its own make decides); this step relinks only
# when it changed. The object's names that would clash with this step's own are renamed in a copy
# (objcopy with RENAME_FLAGS, no compile). Built from the top Makefile, the kernel step is built
# first, so that two makes never write its object at once. Included by step.mk and
# permute_step.mk after they set KERNEL_OBJECT_NAME and RENAME_FLAGS (which may read $<, the
# kernel step's object).
KERNEL_DIR := $(COMMON_DIR)/../$(STEP_KERNEL)
KERNEL_OBJECT := $(KERNEL_DIR)/$(BUILD_DIR)/$(KERNEL_OBJECT_NAME)
OBJCOPY ?= objcopy
.PHONY: FORCE
FORCE:
# What the kernel step is asked to make: its object, and more where the including file says so.
KERNEL_GOALS ?= $(BUILD_DIR)/$(KERNEL_OBJECT_NAME)
$(KERNEL_OBJECT): FORCE
	@$(MAKE) $(if $(Q),-s) --no-print-directory -C $(KERNEL_DIR) $(KERNEL_GOALS)
$(BUILD_DIR)/reused_kernel.o: $(KERNEL_OBJECT) | $(BUILD_DIR)
	$(Q)$(OBJCOPY) $(RENAME_FLAGS) $< $@
STEP_OBJECTS += $(BUILD_DIR)/reused_kernel.o

# `make -f Makefile -f ../common/print.mk print-STEP_KIND` in a step folder prints what the step's
# Makefile declares, for the tools and tests (so nothing is inferred from a folder name).
print-%:
	@echo $($*)

# The harness's host objects (HOST_SOURCES, set by the includer) are the same for every step:
# compiled once into common/.build and linked by each step. Each is written under a temporary name
# and renamed, so that steps built side by side (make -j at the top) never link a half-written one.
HOST_BUILD_DIR := $(COMMON_DIR)/.build
HOST_OBJECTS := $(addprefix $(HOST_BUILD_DIR)/,$(HOST_SOURCES:.cpp=.o))

$(HOST_BUILD_DIR)/%.o: $(COMMON_DIR)/%.cpp | $(HOST_BUILD_DIR)
	$(Q)$(CXX) $(CXXFLAGS) $(OPENMP_FLAGS) -MMD -MP -MF $@.$$$$.d -MT $@ -c $< -o $@.$$$$ && \
	  mv -f $@.$$$$.d $(@:.o=.d) && mv -f $@.$$$$ $@

$(HOST_BUILD_DIR):
	$(Q)mkdir -p $@

-include $(wildcard $(HOST_BUILD_DIR)/*.d)

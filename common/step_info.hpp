// What a step's Makefile declares, passed in by common/step.mk as macros: its name (the folder),
// its kind (cpu, kernel, host_pipeline, distributed) and the element types it supports.
// Included by the drivers, which own main().
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"

#if !defined(STEP_NAME) || !defined(STEP_KIND) || !defined(STEP_DTYPES)
#error "STEP_NAME, STEP_KIND and STEP_DTYPES are defined by common/step.mk"
#endif

namespace lab {

inline CliSpec step_cli_spec(std::vector<std::string> variants, int default_reps) {
  return {std::string(STEP_NAME) + "/transpose", std::move(variants), default_reps, STEP_DTYPES};
}

}  // namespace lab

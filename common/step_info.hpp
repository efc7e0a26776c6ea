// What a step's Makefile declares, passed in by common/step.mk as macros: its name (the folder),
// its kind (cpu, kernel, host_pipeline, distributed), the element types it supports and its
// operation (transpose, or copy for the copy reference row). Included by the drivers, which own
// main().
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "matrix.hpp"
#include "report.hpp"

#if !defined(STEP_NAME) || !defined(STEP_KIND) || !defined(STEP_DTYPES) || !defined(STEP_OPERATION)
#error "STEP_NAME, STEP_KIND, STEP_DTYPES and STEP_OPERATION are defined by common/step.mk"
#endif

namespace lab {

// step.mk lets only "transpose" and "copy" through.
inline Operation step_operation() {
  return std::string(STEP_OPERATION) == "copy" ? Operation::kCopy : Operation::kTranspose;
}

// default_variant: what runs without --variant (empty: every variant).
inline CliSpec step_cli_spec(std::vector<std::string> variants, int default_reps,
                             std::string default_variant = "") {
  CliSpec spec{std::string(STEP_NAME) + "/transpose", std::move(variants), default_reps,
               STEP_DTYPES, std::move(default_variant)};
  if (step_operation() == Operation::kCopy) spec.action = "Copies";
  spec.openmp = std::string(STEP_KIND) == "cpu";
  return spec;
}

// A result row of this step: which step, variant, device, element type and matrix; the driver
// fills in what it measured.
inline Measurement step_measurement(std::string variant, std::string device, const Dtype& dtype,
                                    std::int64_t rows, std::int64_t cols) {
  Measurement m;
  m.step = STEP_NAME;
  m.variant = std::move(variant);
  m.device = std::move(device);
  m.dtype = dtype.name;
  m.elem_bytes = dtype.bytes;
  m.kind = STEP_KIND;
  m.rows = rows;
  m.cols = cols;
  return m;
}

}  // namespace lab

// CUDA.cublas: the reference row. Not a step of the progression: the library's answer to the
// same problem, cuBLAS geam (C = alpha * op(A) + beta * op(B)) with alpha = 1, beta = 0 and
// op(A) = A^T, behind the same interface and verified like every step. geam computes, so it needs
// the real element type: S, D, C and Z geam cover float32, float64, complex64 and complex128
// (the Makefile's STEP_DTYPES); 1 * x + 0 returns x's bits for every value the fills use.
#include <cublas_v2.h>

#include <cuComplex.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "../common/cuda_check.cuh"
#include "../common/cuda_step.cuh"

#define CUBLAS_CHECK(call) LAB_CUBLAS_CHECK(call, cublasGetStatusString)

namespace {

cublasHandle_t handle_on(cudaStream_t stream) {
  static cublasHandle_t handle = [] {
    cublasHandle_t created;
    CUBLAS_CHECK(cublasCreate(&created));
    return created;
  }();  // created on the first (untimed, verified) call
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  return handle;
}

// cuBLAS is column-major. Our row-major rows x cols input is its cols x rows matrix A (leading
// dimension cols); our row-major cols x rows output is its rows x cols matrix C (leading
// dimension rows). C = A^T. B is C itself (the documented in-place form) and, with beta = 0,
// contributes nothing.
template <class Element, class Geam>
void transpose_with(Geam geam, Element one, Element zero, const void* in, void* out, int rows,
                    int cols, cudaStream_t stream) {
  auto* c = static_cast<Element*>(out);
  CUBLAS_CHECK(geam(handle_on(stream), CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one,
                    static_cast<const Element*>(in), cols, &zero, c, rows, c, rows));
}

}  // namespace

// The one interface's launcher, given the element type: geam computes, so the storage type alone
// (8 bytes: float64 or complex64?) does not say which geam to call.
#define LAB_LAUNCHER_TAKES_DTYPE
template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream,
                             const lab::Dtype& element) {
  const std::string dtype = element.name;
  if (dtype == "float32") {
    transpose_with<float>(cublasSgeam, 1.0f, 0.0f, in, out, rows, cols, stream);
  } else if (dtype == "float64") {
    transpose_with<double>(cublasDgeam, 1.0, 0.0, in, out, rows, cols, stream);
  } else if (dtype == "complex64") {
    transpose_with<cuComplex>(cublasCgeam, make_cuComplex(1, 0), make_cuComplex(0, 0), in, out,
                              rows, cols, stream);
  } else if (dtype == "complex128") {
    transpose_with<cuDoubleComplex>(cublasZgeam, make_cuDoubleComplex(1, 0),
                                    make_cuDoubleComplex(0, 0), in, out, rows, cols, stream);
  } else {  // the Makefile's STEP_DTYPES keeps other types from reaching here
    std::fprintf(stderr, "CUDA.cublas: no geam for %s\n", dtype.c_str());
    std::exit(lab::kExitUsage);
  }
  return {};
}

const char* const kStepSummary = "reference: cuBLAS geam (S/D/C/Z), the library's transpose";

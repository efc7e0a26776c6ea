// CUDA.cublas: the reference row. Not a step of the progression: the library's answer to the
// same problem, cublasSgeam (C = alpha * op(A) + beta * op(B)) with alpha = 1, beta = 0 and
// op(A) = A^T, behind the same interface and verified like every step.
#include <cublas_v2.h>

#include "../common/cuda_check.cuh"
#include "../common/cuda_step.cuh"

#define CUBLAS_CHECK(call)                                                                     \
  do {                                                                                         \
    const cublasStatus_t cublas_check_status = (call);                                         \
    if (cublas_check_status != CUBLAS_STATUS_SUCCESS)                                          \
      lab::fail_call("cuBLAS", cublasGetStatusString(cublas_check_status), __FILE__, __LINE__, \
                     #call);                                                                   \
  } while (0)

LaunchShape launch_transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  static cublasHandle_t handle = [] {
    cublasHandle_t created;
    CUBLAS_CHECK(cublasCreate(&created));
    return created;
  }();  // created on the first (untimed, verified) call
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  const float one = 1.0f, zero = 0.0f;
  // cuBLAS is column-major. Our row-major rows x cols input is its cols x rows matrix A (leading
  // dimension cols); our row-major cols x rows output is its rows x cols matrix C (leading
  // dimension rows). C = A^T. B is C itself (the documented in-place form) and, with beta = 0,
  // contributes nothing.
  CUBLAS_CHECK(cublasSgeam(handle, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one, in, cols, &zero, out,
                           rows, out, rows));
  return {};
}

const char* const kStepSummary = "reference: cublasSgeam, the library's transpose";

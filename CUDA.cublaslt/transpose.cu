// CUDA.cublaslt: a reference row. Not a step of the progression: cuBLASLt's layout conversion,
// cublasLtMatrixTransform (C = alpha * op(A) + beta * op(B)) with alpha = 1, beta = 0 and
// op(A) = A^T, behind the same interface and verified like every step. Unlike geam it takes
// 1- and 2-byte types: int8 (our uint8's bits, scaled in int32), float16 and bfloat16 (scaled in
// float32), besides float32, float64, complex64 and complex128. 1 * x + 0 returns x's bits for
// every value the fills use. A type the library refuses at run time is reported as not supported
// (exit 2), which the tools show as n/a.
#include <cublasLt.h>

#include <cuComplex.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../common/cuda_check.cuh"
#include "../common/cuda_step.cuh"

#define CUBLAS_CHECK(call) LAB_CUBLAS_CHECK(call, cublasLtGetStatusString)

namespace {

// How one element type goes through cublasLt: the data type of A and C, the scale type, and
// alpha = 1, beta = 0 in that scale type (room for the largest, a cuDoubleComplex).
struct LtType {
  cudaDataType data, scale;
  alignas(16) unsigned char one[16], zero[16];
};

template <class Scalar>
LtType lt_type(cudaDataType data, cudaDataType scale, Scalar one, Scalar zero) {
  static_assert(sizeof(Scalar) <= sizeof(LtType::one), "scale type too large");
  LtType type{data, scale, {}, {}};
  std::memcpy(type.one, &one, sizeof one);
  std::memcpy(type.zero, &zero, sizeof zero);
  return type;
}

bool lt_type_of(const std::string& dtype, LtType* type) {
  if (dtype == "uint8") {  // int8 data with an int32 scale: 1 * x + 0 keeps every bit pattern
    *type = lt_type<int>(CUDA_R_8I, CUDA_R_32I, 1, 0);
  } else if (dtype == "float16") {
    *type = lt_type<float>(CUDA_R_16F, CUDA_R_32F, 1.0f, 0.0f);
  } else if (dtype == "bfloat16") {
    *type = lt_type<float>(CUDA_R_16BF, CUDA_R_32F, 1.0f, 0.0f);
  } else if (dtype == "float32") {
    *type = lt_type<float>(CUDA_R_32F, CUDA_R_32F, 1.0f, 0.0f);
  } else if (dtype == "float64") {
    *type = lt_type<double>(CUDA_R_64F, CUDA_R_64F, 1.0, 0.0);
  } else if (dtype == "complex64") {
    *type = lt_type<cuComplex>(CUDA_C_32F, CUDA_C_32F, make_cuComplex(1, 0), make_cuComplex(0, 0));
  } else if (dtype == "complex128") {
    *type = lt_type<cuDoubleComplex>(CUDA_C_64F, CUDA_C_64F, make_cuDoubleComplex(1, 0),
                                     make_cuDoubleComplex(0, 0));
  } else {
    return false;
  }
  return true;
}

// The descriptors of one (dtype, shape), made on the first (untimed, verified) call and reused,
// so that a timed call is the library call and nothing else.
struct Plan {
  std::string dtype;
  int rows = -1, cols = -1;
  LtType type{};
  cublasLtMatrixTransformDesc_t transform = nullptr;
  cublasLtMatrixLayout_t a = nullptr, c = nullptr;
  bool tried = false;  // cublasLtMatrixTransform has run once with these descriptors

  void release() {
    if (transform != nullptr) CUBLAS_CHECK(cublasLtMatrixTransformDescDestroy(transform));
    if (a != nullptr) CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(a));
    if (c != nullptr) CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(c));
    transform = nullptr;
    a = c = nullptr;
    tried = false;
  }
};

cublasLtHandle_t lt_handle() {
  static cublasLtHandle_t handle = [] {
    cublasLtHandle_t created;
    CUBLAS_CHECK(cublasLtCreate(&created));
    return created;
  }();  // created on the first (untimed, verified) call
  return handle;
}

void make_transform_desc(Plan& plan) {
  CUBLAS_CHECK(cublasLtMatrixTransformDescCreate(&plan.transform, plan.type.scale));
  const cublasOperation_t transpose = CUBLAS_OP_T;
  CUBLAS_CHECK(cublasLtMatrixTransformDescSetAttribute(
      plan.transform, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &transpose, sizeof transpose));
}

// cuBLASLt's default order is column-major, as in CUDA.cublas: our row-major rows x cols input
// is its cols x rows matrix A (leading dimension cols); our row-major cols x rows output is its
// rows x cols matrix C (leading dimension rows). C = A^T: transa = T. With beta = 0 there is no
// B: the pointer and its layout are null.
Plan& plan_for(const char* dtype, int rows, int cols) {
  static Plan plan;
  if (plan.transform != nullptr && plan.rows == rows && plan.cols == cols &&
      std::strcmp(plan.dtype.c_str(), dtype) == 0)
    return plan;
  plan.release();
  if (!lt_type_of(dtype, &plan.type)) {
    std::fprintf(stderr, "CUDA.cublaslt: no cudaDataType for %s\n", dtype);
    std::exit(lab::kExitUsage);
  }
  plan.dtype = dtype;
  plan.rows = rows;
  plan.cols = cols;
  make_transform_desc(plan);
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.a, plan.type.data, cols, rows, cols));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.c, plan.type.data, rows, cols, rows));
  return plan;
}

bool refused(cublasStatus_t status) {
  return status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t transform(const Plan& plan, const void* in, void* out, cudaStream_t stream) {
  return cublasLtMatrixTransform(lt_handle(), plan.transform, plan.type.one, in, plan.a,
                                 plan.type.zero, nullptr, nullptr, out, plan.c, stream);
}

// The first call with new descriptors finds out whether the library takes the type. For int8
// data NVIDIA's own examples scale in float32, so a refused int32 scale is tried once more with a
// float32 one (-128..127 are exact floats: 1 * x + 0 still keeps every bit pattern).
void first_transform(Plan& plan, const void* in, void* out, cudaStream_t stream) {
  cublasStatus_t status = transform(plan, in, out, stream);
  std::string why = cublasLtGetStatusName(status);
  if (refused(status) && plan.type.scale == CUDA_R_32I) {
    plan.type = lt_type<float>(plan.type.data, CUDA_R_32F, 1.0f, 0.0f);
    CUBLAS_CHECK(cublasLtMatrixTransformDescDestroy(plan.transform));
    plan.transform = nullptr;
    make_transform_desc(plan);
    status = transform(plan, in, out, stream);
    if (status == CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr,
                   "CUDA.cublaslt: note: %s with a CUDA_R_32I scale refused (%s); "
                   "scaled in CUDA_R_32F\n",
                   plan.dtype.c_str(), why.c_str());
    }
    why += " with a CUDA_R_32I scale, " + std::string(cublasLtGetStatusName(status)) +
           " with CUDA_R_32F";
  }
  if (refused(status)) {
    std::fprintf(stderr, "CUDA.cublaslt: cublasLtMatrixTransform does not support %s (%s)\n",
                 plan.dtype.c_str(), why.c_str());
    std::exit(lab::kExitUsage);
  }
  CUBLAS_CHECK(status);
  plan.tried = true;
}

}  // namespace

// The one interface's launcher, given the element type: the library's data type is the real
// type, not the storage type (2 bytes: float16 or bfloat16?).
#define LAB_LAUNCHER_TAKES_DTYPE
template <class T>
LaunchShape launch_transpose(const T* in, T* out, int rows, int cols, cudaStream_t stream,
                             const lab::Dtype& dtype) {
  Plan& plan = plan_for(dtype.name, rows, cols);
  if (plan.tried) {
    CUBLAS_CHECK(transform(plan, in, out, stream));  // a timed call: the library call alone
  } else {
    first_transform(plan, in, out, stream);
  }
  return {};
}

const char* const kStepSummary =
    "reference: cublasLtMatrixTransform (alpha 1, beta 0, A^T), cuBLASLt's transpose";

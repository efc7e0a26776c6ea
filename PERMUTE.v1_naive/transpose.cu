// PERMUTE.v1_naive: any permutation on the GPU, one thread per output element.
// A thread takes an output index o, splits it into the output's multi-index (dividing by the
// output extents, innermost first) and adds each index times the stride of the input axis it came
// from: the definition, as index arithmetic. The indices are 64-bit, since a tensor may hold more
// than 2^31 elements. Neighbouring threads write neighbouring outputs: the stores are coalesced.
// The loads go wherever the permutation sends them: where the output's innermost axis is not the
// input's, the 32 threads of a warp read 32 elements a whole input stride apart, 32 sectors for
// one warp's load (CUDA.v1's lesson, now in N dimensions). And every thread pays up to 8 64-bit
// divisions for its index, even where the tensor is a plain matrix in disguise.
#include <algorithm>

#include "../common/permute_step.hpp"

namespace {

constexpr int kBlockThreads = 256;
// Blocks launched at most: many times what any GPU holds at once; a thread loops past that.
constexpr lab::Index kMaxBlocks = lab::Index{1} << 16;

// What every thread needs, passed by value: the output's extents and, for each output axis, the
// stride of its input axis.
struct Indexing {
  int rank;
  lab::Index count;
  lab::Index out_extent[lab::kMaxPermuteRank];
  lab::Index in_stride[lab::kMaxPermuteRank];
};

Indexing indexing_of(const lab::Permutation& p) {
  Indexing ix{p.rank, p.elements(), {}, {}};
  for (int k = 0; k < p.rank; ++k) {
    ix.out_extent[k] = p.out_extent(k);
    ix.in_stride[k] = p.in_stride(p.perm[k]);
  }
  return ix;
}

template <class T>
__global__ void permute_kernel(const T* __restrict__ in, T* __restrict__ out, Indexing ix) {
  const lab::Index threads = lab::Index{gridDim.x} * blockDim.x;
  for (lab::Index o = lab::Index{blockIdx.x} * blockDim.x + threadIdx.x; o < ix.count;
       o += threads) {
    lab::Index rest = o, from = 0;
    for (int k = ix.rank - 1; k >= 0; --k) {
      from += rest % ix.out_extent[k] * ix.in_stride[k];
      rest /= ix.out_extent[k];
    }
    out[o] = in[from];
  }
}

}  // namespace

template <class T>
LaunchShape launch_permute(const T* in, T* out, const lab::Permutation& p, cudaStream_t stream) {
  const Indexing ix = indexing_of(p);
  const dim3 block(kBlockThreads);
  const dim3 grid(
      static_cast<unsigned>(std::min(kMaxBlocks, (ix.count + kBlockThreads - 1) / kBlockThreads)));
  permute_kernel<T><<<grid, block, 0, stream>>>(in, out, ix);
  return {grid, block};
}

const char* const kStepSummary = "one thread per output element, 64-bit index arithmetic";

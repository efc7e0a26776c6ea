// PERMUTE.v2_fused: the naive kernel on the fused problem.
// v1 divides by every axis the user named, and reads as the user's innermost axes say. But many
// "4-d" permutations are smaller problems: axes of extent 1 move nothing, and two axes that are
// neighbours in the input and stay neighbours, in the same order, in the output move as one axis
// of their product. lab::fuse_axes (common/permute.hpp) rewrites the problem before the launch:
// NCHW to NHWC, (64, 64, 56, 56) perm (0, 2, 3, 1), becomes a batch of 64 transposes of
// 64 x 3136, perm (0, 2, 1); (8, 512, 16, 64) perm (0, 2, 1, 3) keeps its innermost axis whole,
// runs of 64 elements. Each thread then divides by 3 extents instead of 4, and where an
// innermost axis survives whole the warp's loads are as contiguous as its stores. The kernel is
// v1's, unchanged: `make diff` shows the one line that fuses. The result is the same element for
// element; the driver verifies it against the definition on the problem as given, never on its
// fused form.
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
  const Indexing ix = indexing_of(lab::fuse_axes(p));
  const dim3 block(kBlockThreads);
  const dim3 grid(
      static_cast<unsigned>(std::min(kMaxBlocks, (ix.count + kBlockThreads - 1) / kBlockThreads)));
  permute_kernel<T><<<grid, block, 0, stream>>>(in, out, ix);
  return {grid, block};
}

const char* const kStepSummary = "axes fused first, then one thread per output element";

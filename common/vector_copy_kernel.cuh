// The definition of lab::launch_vector_copy (vector_copy.cuh), included by common/step_instances.cu
// alone, so that the kernel is compiled once per GPU architecture, in the step's kernel object.
#pragma once

#include <climits>
#include <cstdint>

#include "vector_copy.cuh"

namespace lab {

constexpr int kVectorCopyThreads = 256;
// 16-byte vectors each thread loads before it stores any: 64 bytes in flight per thread, so that
// the loads of a warp overlap instead of waiting one by one.
constexpr int kVectorsPerThread = 4;
constexpr std::size_t kVectorBytes = sizeof(uint4);

// Bytes [0, head) and [head + 16 * vectors, bytes) are copied one at a time (an end not on a
// 16-byte boundary, a size not a multiple of 16); the `vectors` 16-byte vectors between them, which
// start on a 16-byte boundary in both buffers, whole. A block moves kVectorsPerThread consecutive
// blocks' worth of vectors, each load of a warp coalesced; the grid strides over what is left.
__global__ void vector_copy_kernel(const unsigned char* __restrict__ in,
                                   unsigned char* __restrict__ out, std::size_t head,
                                   std::size_t vectors, std::size_t bytes) {
  const uint4* __restrict__ in_vectors = reinterpret_cast<const uint4*>(in + head);
  uint4* __restrict__ out_vectors = reinterpret_cast<uint4*>(out + head);
  const std::size_t per_block = std::size_t{blockDim.x} * kVectorsPerThread;
  const std::size_t per_grid = per_block * gridDim.x;
  for (std::size_t first = blockIdx.x * per_block + threadIdx.x; first < vectors;
       first += per_grid) {
    uint4 moved[kVectorsPerThread];
#pragma unroll
    for (int k = 0; k < kVectorsPerThread; ++k) {
      const std::size_t i = first + static_cast<std::size_t>(k) * blockDim.x;
      if (i < vectors) moved[k] = in_vectors[i];
    }
#pragma unroll
    for (int k = 0; k < kVectorsPerThread; ++k) {
      const std::size_t i = first + static_cast<std::size_t>(k) * blockDim.x;
      if (i < vectors) out_vectors[i] = moved[k];
    }
  }
  const std::size_t tail = head + vectors * kVectorBytes;
  const std::size_t single = head + (bytes - tail);
  const std::size_t threads = std::size_t{blockDim.x} * gridDim.x;
  for (std::size_t j = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; j < single;
       j += threads) {
    const std::size_t at = j < head ? j : tail + (j - head);
    out[at] = in[at];
  }
}

LaunchShape launch_vector_copy(const void* in, void* out, std::size_t bytes, cudaStream_t stream) {
  const auto in_address = reinterpret_cast<std::uintptr_t>(in);
  const auto out_address = reinterpret_cast<std::uintptr_t>(out);
  std::size_t head = bytes, vectors = 0;  // at different offsets from 16: byte by byte
  if (in_address % kVectorBytes == out_address % kVectorBytes) {
    head = (kVectorBytes - in_address % kVectorBytes) % kVectorBytes;
    if (head > bytes) head = bytes;
    vectors = (bytes - head) / kVectorBytes;
  }
  const std::size_t single = bytes - vectors * kVectorBytes;
  const std::size_t per_block = std::size_t{kVectorCopyThreads} * kVectorsPerThread;
  std::size_t blocks = (vectors + per_block - 1) / per_block;
  const std::size_t single_blocks = (single + kVectorCopyThreads - 1) / kVectorCopyThreads;
  if (single_blocks > blocks) blocks = single_blocks;
  if (blocks == 0) blocks = 1;
  if (blocks > INT_MAX) blocks = INT_MAX;  // gridDim.x's limit; the grid strides over the rest
  const dim3 grid(static_cast<unsigned>(blocks)), block(kVectorCopyThreads);
  vector_copy_kernel<<<grid, block, 0, stream>>>(static_cast<const unsigned char*>(in),
                                                 static_cast<unsigned char*>(out), head, vectors,
                                                 bytes);
  return {grid, block};
}

}  // namespace lab

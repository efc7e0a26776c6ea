// CUDA.v2's second kernel, for comparison (--variant write-coalesced), kept out of transpose.cu so
// that the step's file, and `make diff`, hold only its lesson. The same kernel with x and y swapped
// in (r, c): a warp now reads down an input column (strided) and writes along an output row
// (coalesced). Which of the two wins on Hopper, and why, is in this step's README.

template <class T>
__global__ void write_coalesced_kernel(const T* in, T* out, int rows, int cols) {
  const int c = blockIdx.x * TILE_DIM + threadIdx.y;
  const int r = blockIdx.y * TILE_DIM + threadIdx.x;
  if (r < rows && c < cols)
    out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
}

template <class T>
LaunchShape launch_write_coalesced(const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, TILE_DIM);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  lab::require_grid(grid, lab::GridAxes::kColsInX, TILE_DIM, TILE_DIM, rows, cols);
  write_coalesced_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
  return {grid, block};
}

// The first entry is the default and must be launch_transpose (what the other kinds of step reuse).
const lab::KernelVariant kKernelVariants[] = {
    LAB_KERNEL_VARIANT("read-coalesced", kStepSummary, launch_transpose),
    LAB_KERNEL_VARIANT("write-coalesced",
                       "the same, x and y swapped: strided reads, coalesced writes",
                       launch_write_coalesced)};

// CUDA.v9_multigpu: a matrix spread over several GPUs, transposed through NCCL.
// New since v7_packed: no new kernel (v7's launcher is linked, not copied). The matrix lives in
// row bands, one per GPU, and so does its transpose, so most of the output a GPU needs sits on the
// other GPUs: the transpose becomes a local transpose plus an all-to-all exchange.
// 1. Each GPU cuts its input band into K chunks of whole rows and transposes each with v7: the
//    transposed chunk (cols x chunk_rows) holds, one after another, the block every destination
//    needs (rows [c0(d), c1(d)) of it are destination d's output rows).
// 2. The blocks go out with grouped ncclSend/ncclRecv (as nccl-tests' alltoall): NCCL moves bytes.
// 3. Each block lands in its place in the output band: narrow rows at a wide pitch, copied by the
//    SMs (--place copy-engine: by 2D copies; which is faster depends on what else runs, README).
// 4. Chunks pipeline over three streams: while chunk k crosses the links, chunk k+1 is transposed
//    and chunk k placed, so the links, not the local work, set the time; nothing waits for the
//    exchange but the placement of what it brings, and the link stream's priority lets NCCL's
//    kernels onto the SMs first.
// --exchange peer replaces all four where every GPU reaches every other's memory: peer.cu.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <vector>

#include "../common/band_copy.cuh"
#include "distributed.cuh"
#include "peer.cu"  // the peer exchange: one kernel per GPU writes into every rank's band

namespace lab {
namespace {

constexpr Index kMaxPlaceBlocks = Index{1} << 30;  // a block per output row (grid.x < 2^31)

// With symmetric windows the exchange is one ncclAlltoAll, which moves the own block too (into a
// slot of the receive buffer that nothing reads: the own block is placed from the send buffer,
// without waiting for the exchange).
bool exchanges_own_block(const Team& team) {
  return team.nccl_buffers == NcclBuffers::kWindows && !team.virtual_ranks;
}

// The blocks of chunk k that rank g's transposed chunk holds for each destination d: rows
// [c0(d), c1(d)) of a cols x chunk_rows(g, k) matrix, so contiguous. What g receives from s is
// band_cols(g) x chunk_rows(s, k), packed source after source. The own block is placed straight
// from the send buffer.
Blocks chunk_blocks(const Team& team, const Rank& me, int k) {
  const Decomposition& plan = team.plan;
  const int g = me.rank, ranks = plan.ranks;
  Blocks blocks(ranks);
  blocks.send = me.send[k % 2];
  blocks.recv = me.recv[k % 2];
  std::size_t received = 0;
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == g && !exchanges_own_block(team)) continue;
    blocks.send_offset[peer] = plan.bytes(plan.col_begin(peer) * plan.chunk_rows(g, k));
    blocks.send_bytes[peer] = plan.bytes(plan.band_cols(peer) * plan.chunk_rows(g, k));
    blocks.recv_offset[peer] = received;
    blocks.recv_bytes[peer] = plan.bytes(plan.band_cols(g) * plan.chunk_rows(peer, k));
    received += blocks.recv_bytes[peer];
  }
  return blocks;
}

// A block of band_cols(g) rows x chunk_rows(s, k) columns into the output band (band_cols(g) x
// rows), at the columns of source s's chunk k: narrow rows at the pitch of a whole output row.
// The SMs copy them (a block per row, so that NCCL's kernels find free SMs between blocks); with
// nothing beside them they are faster than a copy engine's 2D copies, beside the exchange they
// take SMs from NCCL (measured: README; --place copy-engine compares).
void place_block(const Team& team, const Rank& me, int source, int k, const char* block,
                 cudaStream_t stream) {
  const Decomposition& plan = team.plan;
  const Index width = plan.chunk_rows(source, k), height = plan.band_cols(me.rank);
  if (width == 0 || height == 0) return;
  const Index first_col = plan.row_begin(source) + plan.chunk_begin(source, k);
  char* target = me.out + plan.bytes(first_col);
  if (team.place == PlacePath::kCopyEngine) {
    CUDA_CHECK(cudaMemcpy2DAsync(target, plan.bytes(plan.rows), block, plan.bytes(width),
                                 plan.bytes(width), height, cudaMemcpyDeviceToDevice, stream));
    return;
  }
  // --place-blocks: fewer blocks (each strides over the rows) leave more of every SM to NCCL's
  // kernels, which copy the exchange while the placements run.
  Index blocks = std::min<Index>(height, kMaxPlaceBlocks);
  if (team.place_blocks > 0) blocks = std::min<Index>(blocks, team.place_blocks);
  copy_band(block, target, plan.bytes(width), plan.bytes(plan.rows), height,
            static_cast<int>(blocks), stream);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

Scratch step_scratch(const Team& team, int g) {
  const Decomposition& plan = team.plan;
  if (plan.ranks == 1) return {};
  Scratch scratch;
  for (int k = 0; k < plan.chunks; ++k) {
    Index received = 0;
    for (int s = 0; s < plan.ranks; ++s)
      if (s != g || exchanges_own_block(team)) received += plan.chunk_rows(s, k);
    scratch.send = std::max(scratch.send, plan.bytes(plan.chunk_rows(g, k) * plan.cols));
    scratch.recv = std::max(scratch.recv, plan.bytes(received * plan.band_cols(g)));
  }
  return scratch;
}

void all_to_all(Team& team, const std::vector<Blocks>& blocks) {
  const int ranks = team.plan.ranks;
  if (exchanges_own_block(team)) {
#if LAB_NCCL_HAS_WINDOWS
    NCCL_CHECK(ncclGroupStart(), nullptr);
    for (std::size_t i = 0; i < team.local.size(); ++i) {
      Rank& me = team.local[i];
      const Blocks& b = blocks[i];
      NCCL_CHECK(ncclAlltoAll(b.send, b.recv, b.send_bytes[0], ncclUint8, me.comm, me.link),
                 me.comm);
    }
    NCCL_CHECK(ncclGroupEnd(), nullptr);
    return;
#endif
  }
  if (!team.virtual_ranks) {
    // One group: every send and receive of every local rank is posted before any may block.
    NCCL_CHECK(ncclGroupStart(), nullptr);
    for (std::size_t i = 0; i < team.local.size(); ++i) {
      Rank& me = team.local[i];
      const Blocks& b = blocks[i];
      for (int peer = 0; peer < ranks; ++peer) {
        if (b.send_bytes[peer] != 0)
          NCCL_CHECK(ncclSend(b.send + b.send_offset[peer], b.send_bytes[peer], ncclUint8, peer,
                              me.comm, me.link),
                     me.comm);
        if (b.recv_bytes[peer] != 0)
          NCCL_CHECK(ncclRecv(b.recv + b.recv_offset[peer], b.recv_bytes[peer], ncclUint8, peer,
                              me.comm, me.link),
                     me.comm);
      }
    }
    NCCL_CHECK(ncclGroupEnd(), nullptr);
    return;
  }
  // Virtual ranks share one GPU: the same blocks move by device copies. Like a collective, no
  // rank's link stream passes the exchange before every rank has reached it (so every send
  // buffer is ready) and before every copy is done (so every buffer is free again afterwards).
  auto barrier = [&] {
    for (Rank& me : team.local) CUDA_CHECK(cudaEventRecord(me.joined, me.link));
    for (Rank& me : team.local)
      for (Rank& other : team.local) CUDA_CHECK(cudaStreamWaitEvent(me.link, other.joined, 0));
  };
  barrier();
  for (std::size_t d = 0; d < team.local.size(); ++d) {  // each receiver pulls its blocks
    Rank& me = team.local[d];
    for (int s = 0; s < ranks; ++s) {
      const Blocks& from = blocks[s];
      const std::size_t bytes = blocks[d].recv_bytes[s];
      if (bytes == 0) continue;
      CUDA_CHECK(cudaMemcpyAsync(blocks[d].recv + blocks[d].recv_offset[s],
                                 from.send + from.send_offset[me.rank], bytes,
                                 cudaMemcpyDeviceToDevice, me.link));
    }
  }
  barrier();
}

template <class T>
void enqueue_distributed_transpose(Team& team) {
  if (team.exchange == Exchange::kPeer) return enqueue_peer_transpose<T>(team);
  const Decomposition& plan = team.plan;
  if (plan.ranks == 1) {  // one GPU: the whole matrix is its band, nothing to exchange
    Rank& me = team.local[0];
    CUDA_CHECK(cudaSetDevice(me.device));
    me.shape =
        local_transpose(reinterpret_cast<const T*>(me.in), reinterpret_cast<T*>(me.out),
                        static_cast<int>(plan.rows), static_cast<int>(plan.cols), me.compute);
    return;
  }
  for (int k = 0; k < plan.chunks; ++k) {
    const int b = k % 2;
    std::vector<Blocks> blocks;
    for (Rank& me : team.local) {
      CUDA_CHECK(cudaSetDevice(me.device));
      const Index chunk_rows = plan.chunk_rows(me.rank, k);
      // Buffers b last held chunk k-2: placed means sent (placement waited for the exchange) and
      // read by both placements, so the transpose may overwrite the send buffer and the exchange
      // the receive buffer.
      if (k >= 2) CUDA_CHECK(cudaStreamWaitEvent(me.compute, me.placed[b], 0));
      if (chunk_rows != 0) {
        const T* chunk = reinterpret_cast<const T*>(
            me.in + plan.bytes(plan.chunk_begin(me.rank, k) * plan.cols));
        const LaunchShape shape =
            local_transpose(chunk, reinterpret_cast<T*>(me.send[b]), static_cast<int>(chunk_rows),
                            static_cast<int>(plan.cols), me.compute);
        if (k == 0) me.shape = shape;
      }
      CUDA_CHECK(cudaEventRecord(me.transposed[b], me.compute));
      CUDA_CHECK(cudaStreamWaitEvent(me.link, me.transposed[b], 0));
      // The own block stays here: placed straight from the transposed chunk, beside the exchange.
      CUDA_CHECK(cudaStreamWaitEvent(me.place, me.transposed[b], 0));
      place_block(team, me, me.rank, k,
                  me.send[b] + plan.bytes(plan.col_begin(me.rank) * chunk_rows), me.place);
      blocks.push_back(chunk_blocks(team, me, k));
    }
    all_to_all(team, blocks);
    for (std::size_t i = 0; i < team.local.size(); ++i) {
      Rank& me = team.local[i];
      CUDA_CHECK(cudaSetDevice(me.device));
      CUDA_CHECK(cudaEventRecord(me.exchanged[b], me.link));
      CUDA_CHECK(cudaStreamWaitEvent(me.place, me.exchanged[b], 0));
      for (int s = 0; s < plan.ranks; ++s)
        if (s != me.rank)
          place_block(team, me, s, k, me.recv[b] + blocks[i].recv_offset[s], me.place);
      CUDA_CHECK(cudaEventRecord(me.placed[b], me.place));
    }
  }
  // Later work on the compute streams starts after the last exchange and the last placement.
  const int last = (plan.chunks - 1) % 2;
  for (Rank& me : team.local) {
    CUDA_CHECK(cudaSetDevice(me.device));
    CUDA_CHECK(cudaStreamWaitEvent(me.compute, me.placed[last], 0));
  }
}

#define LAB_INSTANTIATE_DISTRIBUTED(T) template void enqueue_distributed_transpose<T>(Team&);
LAB_INSTANTIATE_DISTRIBUTED(Bytes1)
LAB_INSTANTIATE_DISTRIBUTED(Bytes2)
LAB_INSTANTIATE_DISTRIBUTED(Bytes4)
LAB_INSTANTIATE_DISTRIBUTED(Bytes8)
LAB_INSTANTIATE_DISTRIBUTED(Bytes16)

}  // namespace lab

const char* const kStepSummary =
    "several GPUs: local transposes in chunks, NCCL all-to-all, placement, overlapped";

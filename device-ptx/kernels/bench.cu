// Benchmark kernels behind `gda4j latency` and `gda4j bandwidth` (io.gda4j.samples).
// Scope codes: 0 = thread, 1 = warp, 2 = block (io.gda4j.world.Scope).
#include <gda4j/gda4j.cuh>

using namespace gda4j;

namespace {

constexpr uint32_t SCOPE_THREAD = 0;
constexpr uint32_t SCOPE_WARP = 1;

// bytes == 0 means a bare signal; otherwise put_signal in the requested scope. Uniform across the block.
__device__ __forceinline__ int send(const DeviceView* v, int peer, uint32_t scope, uint64_t dst, uint64_t src,
                                    uint64_t bytes, uint64_t sig, uint64_t seq) {
  if (bytes == 0) {
    int st = OK;
    if (threadIdx.x == 0) st = signal(v, peer, sig, SIGNAL_SET, seq);
    return __syncthreads_or(st != OK) ? ERR_ABORTED : OK;
  }
  if (scope == SCOPE_THREAD) {
    int st = OK;
    if (threadIdx.x == 0) st = put_signal(v, peer, dst, src, bytes, sig, SIGNAL_SET, seq);
    return __syncthreads_or(st != OK) ? ERR_ABORTED : OK;
  }
  if (scope == SCOPE_WARP) {
    int st = OK;
    if (threadIdx.x < 32) st = put_signal_warp(v, peer, dst, src, bytes, sig, SIGNAL_SET, seq);
    return __syncthreads_or(st != OK) ? ERR_ABORTED : OK;
  }
  return put_signal_block(v, peer, dst, src, bytes, sig, SIGNAL_SET, seq);
}

}  // namespace

// Ping-pong between this rank and `peer`: the initiator sends round i and waits for the echo, the responder
// waits and echoes. Both ranks use the same heap offsets (symmetric heap). Launch one block per rank:
// 1 thread for thread scope, 32 for warp, any size for block. The initiator writes each measured round
// trip in nanoseconds (%globaltimer) to rtt_ns[0 .. iterations). Signal words must start at zero; rounds
// count up from `first_seq`, so a rerun on the same words passes the next unused value.
extern "C" __global__ void gda4j_pingpong(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset,
                                          uint64_t bytes, uint64_t sig_offset, uint64_t first_seq,
                                          uint32_t warmup, uint32_t iterations, int initiator, uint32_t scope,
                                          uint32_t* rtt_ns, int* status_out) {
  int st = OK;
  const uint32_t total = warmup + iterations;
  for (uint32_t i = 0; i < total && st == OK; ++i) {
    const uint64_t seq = first_seq + i;
    if (initiator) {
      const uint64_t t0 = global_timer_ns();
      st = send(v, peer, scope, dst_offset, src_offset, bytes, sig_offset, seq);
      if (st == OK) st = wait_until_block(v, sig_offset, CMP_GE, seq);
      if (st == OK && threadIdx.x == 0 && i >= warmup) rtt_ns[i - warmup] = (uint32_t)(global_timer_ns() - t0);
    } else {
      st = wait_until_block(v, sig_offset, CMP_GE, seq);
      if (st == OK) st = send(v, peer, scope, dst_offset, src_offset, bytes, sig_offset, seq);
    }
  }
  if (threadIdx.x == 0) *status_out = st;
}

// One-directional put bandwidth: every block copies its 16-byte-aligned slice of [0, bytes) `iterations`
// times with put_block. The host times the launch with events; kernel completion makes the data visible.
extern "C" __global__ void gda4j_put_bandwidth(const DeviceView* v, int peer, uint64_t dst_offset,
                                               uint64_t src_offset, uint64_t bytes, uint32_t iterations,
                                               int* status_out) {
  const uint64_t per_block = ((bytes + gridDim.x - 1) / gridDim.x + 15) & ~uint64_t(15);
  const uint64_t begin = min(bytes, per_block * blockIdx.x);
  const uint64_t end = min(bytes, begin + per_block);
  int st = OK;
  for (uint32_t it = 0; it < iterations && st == OK; ++it) {
    st = put_block(v, peer, dst_offset + begin, src_offset + begin, end - begin);
  }
  if (st != OK && threadIdx.x == 0) atomicMin(status_out, st);
}

// Benchmark kernels behind `gda4j latency` and `gda4j bandwidth` (io.gda4j.samples).
// Scope codes: 0 = thread, 1 = warp, 2 = block (io.gda4j.world.Scope).
// This build leaves the device API's IBGDA branch out (GDA4J_IBGDA_ENABLED 0), so the P2P (and proxy) kernels keep
// their register count and code exactly; bench_ibgda.cu includes this file with the branch in, as module
// bench_ibgda, which the samples load for IBGDA peers.
#ifndef GDA4J_IBGDA_ENABLED
#define GDA4J_IBGDA_ENABLED 0
#endif
#include <gda4j/gda4j.cuh>

using namespace gda4j;

namespace {

constexpr uint32_t SCOPE_THREAD = 0;
constexpr uint32_t SCOPE_WARP = 1;
constexpr uint32_t SCOPE_BLOCK = 2;
constexpr uint32_t MODE_SIGNAL = 0;
constexpr uint32_t MODE_PUT_SIGNAL = 1;
constexpr uint32_t MODE_PUT_INLINE = 2;
constexpr int ERR_PAYLOAD = -100;  // an inline payload arrived altered (io.gda4j.samples.PingPong)

__device__ __forceinline__ uint64_t inline_payload(uint64_t seq) { return seq * 0x9E3779B97F4A7C15ull; }

// One send of round `seq`. Single-thread modes touch no barrier; scoped modes return a block-uniform status.
template <uint32_t MODE, uint32_t SCOPE>
__device__ __forceinline__ int send(const Peer& p, uint64_t dst, uint64_t src, uint64_t bytes, uint64_t sig,
                                    uint64_t seq) {
  if (MODE == MODE_SIGNAL) return signal(p, sig, SIGNAL_SET, seq);
  if (MODE == MODE_PUT_INLINE) return put_inline(p, sig, inline_payload(seq), (uint32_t)seq);
  if (SCOPE == SCOPE_THREAD) return put_signal(p, dst, src, bytes, sig, SIGNAL_SET, seq);
  if (SCOPE == SCOPE_WARP) return put_signal_warp(p, dst, src, bytes, sig, SIGNAL_SET, seq);
  return put_signal_block(p, dst, src, bytes, sig, SIGNAL_SET, seq);
}

template <uint32_t MODE, uint32_t SCOPE>
__device__ __forceinline__ int receive(const Local& me, uint64_t sig, uint64_t seq) {
  if (MODE == MODE_PUT_INLINE) {
    uint64_t value = 0;
    int st = wait_inline(me, sig, (uint32_t)seq, &value);
    return st == OK && value != inline_payload(seq) ? ERR_PAYLOAD : st;
  }
  if (SCOPE == SCOPE_THREAD) return wait_until(me, sig, CMP_GE, seq);
  return wait_until_block(me, sig, CMP_GE, seq);
}

// The ping-pong loop, compiled once per (mode, scope) so each hot loop holds only its own code.
template <uint32_t MODE, uint32_t SCOPE>
__device__ __forceinline__ void pingpong(const DeviceView* v, int peer, uint64_t dst, uint64_t src, uint64_t bytes,
                                         uint64_t sig, uint64_t first_seq, uint32_t warmup, uint32_t iterations,
                                         int initiator, uint32_t* rtt_ns, int* status_out) {
  const Peer p = peer_of(v, peer);
  const Local me = local_of(v);
  int st = OK;
  const uint32_t total = warmup + iterations;
  for (uint32_t i = 0; i < total && st == OK; ++i) {
    const uint64_t seq = first_seq + i;
    if (initiator) {
      const uint64_t t0 = global_timer_ns();
      st = send<MODE, SCOPE>(p, dst, src, bytes, sig, seq);
      if (st == OK) st = receive<MODE, SCOPE>(me, sig, seq);
      if (st == OK && threadIdx.x == 0 && i >= warmup) rtt_ns[i - warmup] = (uint32_t)(global_timer_ns() - t0);
    } else {
      st = receive<MODE, SCOPE>(me, sig, seq);
      if (st == OK) st = send<MODE, SCOPE>(p, dst, src, bytes, sig, seq);
    }
  }
  if (threadIdx.x == 0) *status_out = st;
}

}  // namespace

// Ping-pong between this rank and `peer`: the initiator sends round i and waits for the echo, the responder waits
// and echoes. Both ranks use the same heap offsets (symmetric heap). One block per rank: 1 thread for the
// single-thread kernels, 32 for _warp, any size for _block. The initiator writes each measured round trip in
// nanoseconds (%globaltimer) to rtt_ns[0 .. iterations). The signal word (or the 16-byte inline slot) at
// `sig_offset` must start at zero; rounds count up from `first_seq`.
#define GDA4J_PINGPONG_KERNEL(NAME, MODE, SCOPE)                                                                   \
  extern "C" __global__ void NAME(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset,        \
                                  uint64_t bytes, uint64_t sig_offset, uint64_t first_seq, uint32_t warmup,      \
                                  uint32_t iterations, int initiator, uint32_t* rtt_ns, int* status_out) {       \
    pingpong<MODE, SCOPE>(v, peer, dst_offset, src_offset, bytes, sig_offset, first_seq, warmup, iterations,     \
                          initiator, rtt_ns, status_out);                                                        \
  }

GDA4J_PINGPONG_KERNEL(gda4j_pingpong_signal, MODE_SIGNAL, SCOPE_THREAD)
GDA4J_PINGPONG_KERNEL(gda4j_pingpong_put_inline, MODE_PUT_INLINE, SCOPE_THREAD)
GDA4J_PINGPONG_KERNEL(gda4j_pingpong_put_signal_thread, MODE_PUT_SIGNAL, SCOPE_THREAD)
GDA4J_PINGPONG_KERNEL(gda4j_pingpong_put_signal_warp, MODE_PUT_SIGNAL, SCOPE_WARP)
GDA4J_PINGPONG_KERNEL(gda4j_pingpong_put_signal_block, MODE_PUT_SIGNAL, SCOPE_BLOCK)

// One-directional put bandwidth: [0, bytes) is cut into `chunk_bytes` chunks dealt round-robin to the blocks
// (interleaving keeps every block streaming through nearby addresses; contiguous per-block slices lose ~6% at
// 256 MiB on H200), each moved with put_block, `iterations` times. The host times the launch with events; the
// quiet at the end makes kernel completion mean delivery for every transport.
// __launch_bounds__(1024, 1) caps registers at 64: the indirect back ends (proxy, IBGDA) in the call graph would
// otherwise raise the kernel to 88 and halve the blocks per SM of the p2p configuration (2 x 512 threads needs <= 64).
extern "C" __global__ void __launch_bounds__(1024, 1)
    gda4j_put_bandwidth(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset, uint64_t bytes,
                        uint64_t chunk_bytes, uint32_t iterations, int* status_out) {
  const Peer p = peer_of(v, peer);
  const uint64_t chunks = (bytes + chunk_bytes - 1) / chunk_bytes;
  int st = OK;
  for (uint32_t it = 0; it < iterations && st == OK; ++it) {
    for (uint64_t c = blockIdx.x; c < chunks && st == OK; c += gridDim.x) {
      const uint64_t off = c * chunk_bytes;
      st = put_block(p, dst_offset + off, src_offset + off, min(chunk_bytes, bytes - off));
    }
  }
  // Direct stores are complete when the kernel ends; proxy and IBGDA puts were issued by thread 0 (put_block's
  // indirect path), whose quiet waits until they have landed, so the events around the launch time delivery.
  if (threadIdx.x == 0 && st == OK && !detail::is_direct(p)) st = quiet(v);
  if (st != OK && threadIdx.x == 0) atomicMin(status_out, st);
}

// The proxy's trigger FIFO alone (the peer's transport must be proxy); one thread pushes NOP triggers, which the
// proxy pops and drops:
//  sync_each != 0: after each push the thread waits until the proxy has popped it (the host's tail passed it), and
//                  rtt_ns[i] gets that round trip: publish, the proxy sees and pops it, this GPU sees the new tail;
//  sync_each == 0: `iterations` pushes back to back, then a wait for the last pop; *total_ns gets the whole time, so
//                  total / iterations is what one trigger costs when the pusher does not wait.
// `warmup` synchronous round trips come first, unmeasured. `release`: each NOP is stored as a PUT's trigger is (a
// system-scope release), else as a signal's (relaxed).
extern "C" __global__ void gda4j_fifo_roundtrip(const DeviceView* v, int peer, uint32_t warmup, uint32_t iterations,
                                                int sync_each, int release, uint32_t* rtt_ns, uint64_t* total_ns,
                                                int* status_out) {
  const Peer p = peer_of(v, peer);
  if (p.transport != TRANSPORT_PROXY) {
    *status_out = detail::fail_peer(GDA4J_PEER_FIELDS(p), OP_FLUSH, 0);
    return;
  }
  int st = OK;
  uint64_t q = 0;
  for (uint32_t i = 0; i < warmup && st == OK; ++i) {
    st = proxy::push_nop(p, i, release != 0, &q);
    if (st == OK) st = proxy::wait_popped(p, q);
  }
  if (sync_each) {
    for (uint32_t i = 0; i < iterations && st == OK; ++i) {
      const uint64_t t0 = global_timer_ns();
      st = proxy::push_nop(p, i, release != 0, &q);
      if (st == OK) st = proxy::wait_popped(p, q);
      rtt_ns[i] = (uint32_t)(global_timer_ns() - t0);
    }
  } else {
    const uint64_t t0 = global_timer_ns();
    for (uint32_t i = 0; i < iterations && st == OK; ++i) st = proxy::push_nop(p, i, release != 0, &q);
    if (st == OK) st = proxy::wait_popped(p, q);
    *total_ns = global_timer_ns() - t0;
  }
  *status_out = st;
}

// Benchmark kernels behind `gda4j latency` and `gda4j bandwidth` (io.gda4j.samples).
// Scope codes: 0 = thread, 1 = warp, 2 = block (io.gda4j.world.Scope).
// This build leaves the device API's IBGDA branch out (GDA4J_IBGDA_ENABLED 0), so the P2P (and proxy) kernels keep
// their register count and code exactly; bench_ibgda.cu includes this file with the branch in, as module
// bench_ibgda, which the samples load for IBGDA peers.
#ifndef GDA4J_IBGDA_ENABLED
#define GDA4J_IBGDA_ENABLED 0
#endif
#include <gda4j/gda4j.cuh>
#include "payload_check.cuh"

using namespace gda4j;
using namespace gda4j_bench;

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

__device__ __forceinline__ uint8_t* heap_at(const Local& me, uint64_t offset) {
  return reinterpret_cast<uint8_t*>(me.heap + offset);
}

// The scope's threads meet: the checked loop's fill must be whole before the put that sends it.
template <uint32_t SCOPE>
__device__ __forceinline__ void scope_sync() {
  if (SCOPE != SCOPE_THREAD) __syncthreads();
}

// Adds this thread's mismatches to the rank's payload record, once per kernel (one atomic each, not one per round).
__device__ __forceinline__ void record_check(uint64_t* record, uint64_t bad, uint64_t first, uint64_t rounds) {
  if (bad != 0) {
    atomicAdd(reinterpret_cast<unsigned long long*>(record + PAYLOAD_RECORD_MISMATCHES / 8), bad);
    atomicMin(reinterpret_cast<unsigned long long*>(record + PAYLOAD_RECORD_FIRST / 8), first);
  }
  if (threadIdx.x == 0) record[PAYLOAD_RECORD_ROUNDS / 8] = rounds;
}

// The ping-pong loop, compiled once per (mode, scope, check) so each hot loop holds only its own code.
// CHECK (put_signal only): every round sends a payload of its own and the receiver compares it, outside the
// initiator's timer. Round r uses the half (r & 1) of the source and destination (`stride` bytes apart), so a
// buffer is refilled or compared only when the round before has released it: the initiator fills round r + 1's
// source after round r's echo (whose copy of r - 1 is then complete), and the responder compares round r's data
// after echoing it while the initiator's next payload goes into the other half. The responder's compare and fill
// run while the initiator compares and fills its own, so they stay out of the round trip unless they take longer.
template <uint32_t MODE, uint32_t SCOPE, bool CHECK>
__device__ __forceinline__ void pingpong(const DeviceView* v, int peer, uint64_t dst, uint64_t src, uint64_t bytes,
                                         uint64_t sig, uint64_t first_seq, uint32_t warmup, uint32_t iterations,
                                         int initiator, uint32_t* rtt_ns, int* status_out, uint64_t stride,
                                         uint64_t salt, uint64_t* record) {
  const Peer p = peer_of(v, peer);
  const Local me = local_of(v);
  const uint64_t t = threadIdx.x, n = blockDim.x;
  const uint64_t mine = initiator ? ROLE_INITIATOR : ROLE_RESPONDER;
  const uint64_t theirs = initiator ? ROLE_RESPONDER : ROLE_INITIATOR;
  uint64_t bad = 0, first = NO_MISMATCH, rounds = 0;
  int st = OK;
  const uint32_t total = warmup + iterations;
  if (CHECK && !initiator) {
    payload_fill(heap_at(me, src + (first_seq & 1) * stride), bytes, payload_seed(salt, first_seq, mine), t, n);
    scope_sync<SCOPE>();
  }
  for (uint32_t i = 0; i < total && st == OK; ++i) {
    const uint64_t seq = first_seq + i;
    const uint64_t half = CHECK ? (seq & 1) * stride : 0;
    if (initiator) {
      if (CHECK) {
        payload_fill(heap_at(me, src + half), bytes, payload_seed(salt, seq, mine), t, n);
        scope_sync<SCOPE>();
      }
      const uint64_t t0 = global_timer_ns();
      st = send<MODE, SCOPE>(p, dst + half, src + half, bytes, sig, seq);
      if (st == OK) st = receive<MODE, SCOPE>(me, sig, seq);
      if (st == OK && threadIdx.x == 0 && i >= warmup) rtt_ns[i - warmup] = (uint32_t)(global_timer_ns() - t0);
    } else {
      st = receive<MODE, SCOPE>(me, sig, seq);
      if (st == OK) st = send<MODE, SCOPE>(p, dst + half, src + half, bytes, sig, seq);
    }
    if (CHECK && st == OK) {
      uint64_t off = NO_MISMATCH;
      const uint64_t b = payload_verify(heap_at(me, dst + half), bytes, payload_seed(salt, seq, theirs), t, n, &off);
      if (b != 0) {
        bad += b;
        if (first_key(seq, off) < first) first = first_key(seq, off);
      }
      ++rounds;
      if (!initiator) {
        const uint64_t next = seq + 1;
        payload_fill(heap_at(me, src + (next & 1) * stride), bytes, payload_seed(salt, next, mine), t, n);
        scope_sync<SCOPE>();
      }
    }
  }
  if (CHECK) record_check(record, bad, first, rounds);
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
    pingpong<MODE, SCOPE, false>(v, peer, dst_offset, src_offset, bytes, sig_offset, first_seq, warmup,          \
                                 iterations, initiator, rtt_ns, status_out, 0, 0, nullptr);                      \
  }

// The put_signal ping-pong with the payload check (gda4j latency --check): the arguments above, then the distance
// between the two halves of the source and destination (each `bytes` long, 8-byte aligned), the run's salt, and
// the rank's payload record (payload_check.cuh), zeroed but for `first`, which starts at NO_MISMATCH.
#define GDA4J_PINGPONG_CHECKED_KERNEL(NAME, SCOPE)                                                                 \
  extern "C" __global__ void NAME(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset,        \
                                  uint64_t bytes, uint64_t sig_offset, uint64_t first_seq, uint32_t warmup,      \
                                  uint32_t iterations, int initiator, uint32_t* rtt_ns, int* status_out,         \
                                  uint64_t stride, uint64_t salt, uint64_t* record) {                            \
    pingpong<MODE_PUT_SIGNAL, SCOPE, true>(v, peer, dst_offset, src_offset, bytes, sig_offset, first_seq, warmup, \
                                           iterations, initiator, rtt_ns, status_out, stride, salt, record);     \
  }

GDA4J_PINGPONG_KERNEL(gda4j_pingpong_signal, MODE_SIGNAL, SCOPE_THREAD)
GDA4J_PINGPONG_KERNEL(gda4j_pingpong_put_inline, MODE_PUT_INLINE, SCOPE_THREAD)
GDA4J_PINGPONG_KERNEL(gda4j_pingpong_put_signal_thread, MODE_PUT_SIGNAL, SCOPE_THREAD)
GDA4J_PINGPONG_KERNEL(gda4j_pingpong_put_signal_warp, MODE_PUT_SIGNAL, SCOPE_WARP)
GDA4J_PINGPONG_KERNEL(gda4j_pingpong_put_signal_block, MODE_PUT_SIGNAL, SCOPE_BLOCK)
GDA4J_PINGPONG_CHECKED_KERNEL(gda4j_pingpong_put_signal_thread_checked, SCOPE_THREAD)
GDA4J_PINGPONG_CHECKED_KERNEL(gda4j_pingpong_put_signal_warp_checked, SCOPE_WARP)
GDA4J_PINGPONG_CHECKED_KERNEL(gda4j_pingpong_put_signal_block_checked, SCOPE_BLOCK)

// The bandwidth check (gda4j bandwidth --check), outside the timed launches: gda4j_payload_fill writes the payload of
// `seed` into [offset, offset + bytes) of this rank's heap before a measurement; after it, the host copies what
// arrived at the peer back into this rank's heap and gda4j_payload_verify compares it, counting into `record` as
// round `round`. Any grid; offsets 8-byte aligned.
extern "C" __global__ void gda4j_payload_fill(const DeviceView* v, uint64_t offset, uint64_t bytes, uint64_t seed) {
  payload_fill(heap_at(local_of(v), offset), bytes, seed, (uint64_t)blockIdx.x * blockDim.x + threadIdx.x,
               (uint64_t)gridDim.x * blockDim.x);
}

extern "C" __global__ void gda4j_payload_verify(const DeviceView* v, uint64_t offset, uint64_t bytes, uint64_t seed,
                                                uint64_t round, uint64_t* record) {
  const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  uint64_t off = NO_MISMATCH;
  const uint64_t bad = payload_verify(heap_at(local_of(v), offset), bytes, seed, t, (uint64_t)gridDim.x * blockDim.x, &off);
  if (bad != 0) {
    atomicAdd(reinterpret_cast<unsigned long long*>(record + PAYLOAD_RECORD_MISMATCHES / 8), bad);
    atomicMin(reinterpret_cast<unsigned long long*>(record + PAYLOAD_RECORD_FIRST / 8), first_key(round, off));
  }
  if (t == 0) atomicAdd(reinterpret_cast<unsigned long long*>(record + PAYLOAD_RECORD_ROUNDS / 8), 1ull);
}

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

// Host-launched device API calls (io.gda4j.world.DeviceOps): one launch runs one call of the device API on
// one rank. Used by tests and by host code that wants a single put or signal without writing a kernel.
// Each call that moves data ends with quiet, so the operation is complete when the kernel is: for direct peers
// that is a fence, for IBGDA peers it waits for the CQEs.
// Scope codes: 0 = thread, 1 = warp, 2 = block (io.gda4j.world.Scope). Launch one block (1, 32 or N threads).
//
// Every launch that sends ends with flush(peer), so what it sent is at the peer when the launch completes (p2p:
// a fence, already true at kernel end; proxy: the triggers' copies have landed) and the host can read it at once.
#include <gda4j/gda4j.cuh>

using namespace gda4j;

namespace {
// Called by one thread after the sends (and after a barrier where several threads sent).
__device__ __forceinline__ int finish(const DeviceView* v, int peer, int st) { return st == OK ? flush(v, peer) : st; }
}  // namespace

// put (with_signal == 0) or put_signal (with_signal != 0) in the given scope.
extern "C" __global__ void gda4j_op_put(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset,
                                        uint64_t bytes, uint32_t scope, int with_signal, uint64_t sig_offset,
                                        uint32_t sig_op, uint64_t sig_value, int* status_out) {
  int st = OK;
  if (scope == 0) {
    if (threadIdx.x == 0) {
      st = with_signal ? put_signal(v, peer, dst_offset, src_offset, bytes, sig_offset, sig_op, sig_value)
                       : put(v, peer, dst_offset, src_offset, bytes);
      *status_out = finish(v, peer, st);
    }
  } else if (scope == 1) {
    if (threadIdx.x < 32) {
      st = with_signal ? put_signal_warp(v, peer, dst_offset, src_offset, bytes, sig_offset, sig_op, sig_value)
                       : put_warp(v, peer, dst_offset, src_offset, bytes);
      __syncwarp();
      if (threadIdx.x == 0) *status_out = finish(v, peer, st);
    }
  } else {
    st = with_signal ? put_signal_block(v, peer, dst_offset, src_offset, bytes, sig_offset, sig_op, sig_value)
                     : put_block(v, peer, dst_offset, src_offset, bytes);
    __syncthreads();
    if (threadIdx.x == 0) *status_out = finish(v, peer, st);
  }
}

// Every thread of the grid adds `value` to the peer's word `per_thread` times: the sum is exact or broken.
extern "C" __global__ void gda4j_op_signal_add(const DeviceView* v, int peer, uint64_t sig_offset,
                                               uint64_t value, uint32_t per_thread, int* status_out) {
  int st = OK;
  for (uint32_t i = 0; i < per_thread && st == OK; ++i) st = signal(v, peer, sig_offset, SIGNAL_ADD, value);
  __syncthreads();
  if (threadIdx.x == 0 && st == OK) st = quiet(v);
  if (st != OK) atomicMin(status_out, st);
  __syncthreads();
  if (threadIdx.x == 0) {
    st = flush(v, peer);
    if (st != OK) atomicMin(status_out, st);
  }
}

// signal (set or add) from one thread.
extern "C" __global__ void gda4j_op_signal(const DeviceView* v, int peer, uint64_t sig_offset, uint32_t op,
                                           uint64_t value, int* status_out) {
  *status_out = finish(v, peer, signal(v, peer, sig_offset, op, value));
}

// wait_until from one thread; seen_out gets the last value read.
extern "C" __global__ void gda4j_op_wait_until(const DeviceView* v, uint64_t sig_offset, uint32_t cmp,
                                               uint64_t value, uint64_t* seen_out, int* status_out) {
  uint64_t seen = 0;
  *status_out = wait_until(v, sig_offset, cmp, value, &seen);
  *seen_out = seen;
}

// put_inline of an 8-byte value from one thread.
extern "C" __global__ void gda4j_op_put_inline(const DeviceView* v, int peer, uint64_t slot_offset, uint64_t value,
                                               uint32_t seq, int* status_out) {
  *status_out = finish(v, peer, put_inline(v, peer, slot_offset, value, seq));
}

// wait_inline from one thread; value_out gets the 8-byte payload.
extern "C" __global__ void gda4j_op_wait_inline(const DeviceView* v, uint64_t slot_offset, uint32_t seq,
                                                uint64_t* value_out, int* status_out) {
  uint64_t value = 0;
  *status_out = wait_inline(v, slot_offset, seq, &value);
  *value_out = value;
}

// fence then signal from one thread: the release pattern for a bare signal.
extern "C" __global__ void gda4j_op_fence_signal(const DeviceView* v, int peer, uint64_t sig_offset, uint32_t op,
                                                 uint64_t value, int* status_out) {
  int st = fence(v, peer);
  if (st == OK) st = signal(v, peer, sig_offset, op, value);
  *status_out = finish(v, peer, st);
}

// quiet from one thread.
extern "C" __global__ void gda4j_op_quiet(const DeviceView* v, int* status_out) { *status_out = quiet(v); }

// flush(peer) from one thread.
extern "C" __global__ void gda4j_op_flush(const DeviceView* v, int peer, int* status_out) {
  *status_out = flush(v, peer);
}

// Many puts from many warps, then one signal per warp: warp w of the grid makes `per_warp` put_warp calls, call i
// taking entry w * per_warp + i of `table` ({dst_offset, src_offset, bytes}, three u64 each), then lane 0 adds 1 to
// the peer's word `counter_offset` after a fence. Each block flushes at the end. Over proxy this pushes
// (warps * (per_warp + 1) + blocks) triggers from many warps at once.
extern "C" __global__ void gda4j_op_put_many(const DeviceView* v, int peer, const uint64_t* table, uint32_t per_warp,
                                             uint64_t counter_offset, int* status_out) {
  const Peer p = peer_of(v, peer);
  const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int st = OK;
  for (uint32_t i = 0; i < per_warp && st == OK; ++i) {
    const uint64_t* e = table + 3 * ((uint64_t)warp * per_warp + i);
    st = put_warp(p, e[0], e[1], e[2]);
  }
  __syncwarp();  // the warp's stores (p2p) before lane 0's fence
  if (st == OK && (threadIdx.x & 31) == 0) {
    st = fence(p);
    if (st == OK) st = signal(p, counter_offset, SIGNAL_ADD, 1);
  }
  if (st != OK) atomicMin(status_out, st);
  __syncthreads();
  if (threadIdx.x == 0) {
    st = flush(p);
    if (st != OK) atomicMin(status_out, st);
  }
}

// put then a separate signal (two triggers over proxy, not put_signal), then flush; one block of any size. The
// peer's gda4j_op_wait_checksum checks that the signal never overtakes the data.
extern "C" __global__ void gda4j_op_put_then_signal(const DeviceView* v, int peer, uint64_t dst_offset,
                                                    uint64_t src_offset, uint64_t bytes, uint64_t sig_offset,
                                                    uint64_t sig_value, int* status_out) {
  const Peer p = peer_of(v, peer);
  int st = put_block(p, dst_offset, src_offset, bytes);
  __syncthreads();  // the block's stores (p2p) before thread 0's fence
  if (threadIdx.x == 0) {
    if (st == OK) st = fence(p);
    if (st == OK) st = signal(p, sig_offset, SIGNAL_SET, sig_value);
    *status_out = finish(v, peer, st);
  }
}

// One block: thread 0 waits until the word at `sig_offset` is >= `value`, then the whole block sums the 64-bit words
// of [data_offset, data_offset + 8 * words) into *sum_out (mod 2^64), reading what the signal guarded.
extern "C" __global__ void gda4j_op_wait_checksum(const DeviceView* v, uint64_t sig_offset, uint64_t value,
                                                  uint64_t data_offset, uint64_t words, uint64_t* sum_out,
                                                  int* status_out) {
  const Local me = local_of(v);
  const int st = wait_until_block(me, sig_offset, CMP_GE, value);
  if (threadIdx.x == 0) *status_out = st;
  if (st != OK) return;
  const volatile uint64_t* data = reinterpret_cast<const volatile uint64_t*>(me.heap + data_offset);
  uint64_t sum = 0;
  for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) sum += data[i];
  atomicAdd(reinterpret_cast<unsigned long long*>(sum_out), (unsigned long long)sum);
}

// ---- the inline slot under a sender that does not wait (io.gda4j.world.InlineSlotGpuTest) ---------------------
// Message k (1..count) carries lo = k and hi = k * INLINE_CHECK_MIX, sequence k: a value whose halves came from two
// messages has hi != lo * INLINE_CHECK_MIX (or lo != the sequence wait_inline reports).
constexpr uint32_t INLINE_CHECK_MIX = 0x9E3779B9u;

// put_inline of messages 1..count to the peer's slot back to back, never waiting for the reader. One thread.
extern "C" __global__ void gda4j_op_inline_stream_send(const DeviceView* v, int peer, uint64_t slot_offset,
                                                       uint32_t count, int* status_out) {
  const Peer p = peer_of(v, peer);
  int st = OK;
  for (uint32_t k = 1; k <= count && st == OK; ++k) {
    st = put_inline(p, slot_offset, (uint64_t)(k * INLINE_CHECK_MIX) << 32 | k, k);
  }
  *status_out = finish(v, peer, st);
}

// wait_inline for sequence 1, 2, ... (each time the one after the last received) until message `count` arrives;
// out[0] = values received, out[1] = values not sent whole, out[2] = the first such value, out[3] = its sequence.
// One thread.
extern "C" __global__ void gda4j_op_inline_stream_check(const DeviceView* v, uint64_t slot_offset, uint32_t count,
                                                        uint64_t* out, int* status_out) {
  uint64_t received = 0, torn = 0, first_torn = 0, first_torn_seq = 0;
  uint32_t seq = 1;
  int st = OK;
  for (;;) {
    uint64_t value = 0;
    uint32_t got = 0;
    st = wait_inline(v, slot_offset, seq, &value, &got);
    if (st != OK) break;
    ++received;
    const uint32_t lo = (uint32_t)value;
    const uint32_t hi = (uint32_t)(value >> 32);
    if (hi != lo * INLINE_CHECK_MIX || lo != got) {
      if (torn++ == 0) {
        first_torn = value;
        first_torn_seq = got;
      }
    }
    if ((int32_t)(got - count) >= 0) break;
    seq = got + 1;
    // Fall behind the sender now and then: a reader waiting for a sequence the sender has already passed reads the
    // slot while newer messages land in it, which is when halves of two messages can meet. A reader that always
    // waits for the next message sees nothing newer than it asks for, and so would never meet a torn slot.
    if ((received & 7) == 0) __nanosleep(20000);
  }
  out[0] = received;
  out[1] = torn;
  out[2] = first_torn;
  out[3] = first_torn_seq;
  *status_out = st;
}

// gda4j/transport/proxy/proxy.cuh: the proxy back end of the device API (PortChannel): put, put_signal, signal,
// atomic_add and flush to a peer whose transport is PROXY push 16-byte triggers into the channel's FIFO (fifo.cuh)
// and a host proxy thread executes them with the copy engine. detail/dispatch.cuh calls `proxy::backend` (at the
// end); kernels call the gda4j:: API.
//
// Push protocol (one pushing GPU thread; many may push to one channel at once):
//   1. claim: atomicAdd on the channel's head (GPU memory) gives position q (q, q+1 for PUT_SIGNAL);
//   2. room: q must be below tail + capacity. tail_cache (GPU memory, ld.acquire.gpu) answers almost always; only
//      when the ring looks full is the host's tail read over PCIe (ld.acquire.sys), with a timeout, the abort flag
//      and the proxy's state checked between reads;
//   3. publish: one 16-byte store of {word0, word1} with the lap bit of q in both words. A PUT's store is released
//      at system scope, so the host that sees it (and the copy engine it starts) also sees the data the thread wrote
//      before (and, after a barrier, its warp's or block's). A two-slot trigger is a fence then two relaxed 16-byte
//      stores. A trigger that reads no memory of this GPU (SIGNAL, ATOMIC_ADD, FLUSH, NOP) is stored relaxed: signals
//      and atomics order nothing by contract (fence(peer) before one makes it a release, as on every transport), and
//      the host runs the FIFO in position order whatever order the slots become visible in. The release costs the
//      pusher about 0.6 us on an H100 (a system-scope fence): one thread pushing back to back took 0.92 us per
//      trigger with it and 0.31 without.
// The host pops in position order, so everything claimed before a FLUSH is executed before it; the proxy runs a
// channel's triggers in order on one CUDA stream, so a signal cannot pass the data put before it.
//
// A push that fails after its claim (the room wait timed out) leaves an unpublished slot the host will wait at: the
// channel is unusable afterwards, as the error record and the abort flag already say. Checks (heap range, trigger
// fields) run before the claim, so a rejected call never touches the ring.
#pragma once
#include <stdint.h>
#include "../../layout/view.cuh"
#include "../../core/memory_model.cuh"
#include "../../core/errors.cuh"
#include "../../core/handles.cuh"
#include "../../core/deadline.cuh"
#include "../../core/backend.cuh"
#include "fifo.cuh"

namespace gda4j {
namespace proxy {

// The slow-path waits follow core/deadline.cuh: the host's tail is host memory (HOST_POLLS_PER_LOOK), `done` is GPU
// memory (POLLS_PER_LOOK).

// The handle's low bits are flags (PEER_HANDLE_FLAGS), the rest the channel's address.
__device__ __forceinline__ ProxyChannel* channel_of(const Peer& p) {
  return reinterpret_cast<ProxyChannel*>(p.handle & ~PEER_HANDLE_FLAGS);
}

__device__ __forceinline__ const ProxyControl* control_of(const ProxyChannel* ch) {
  return reinterpret_cast<const ProxyControl*>(__ldg(reinterpret_cast<const unsigned long long*>(&ch->control)));
}

// Between batches of a slow-path wait: the look (abort flag, clock), and the proxy's state before a timeout is
// recorded, so a stopped proxy is named as such. OK = keep waiting.
__device__ inline __noinline__ int wait_check(const Peer& p, const ProxyControl* ctl, Deadline* d, uint32_t code,
                                             uint32_t op, uint64_t position, uint64_t want, uint64_t seen) {
  const DeviceView* v = p.view;
  const int st = look(reinterpret_cast<const uint64_t*>(v->abort_flag), v->timeout_ns, d);
  if (st == ERR_ABORTED) return st;
  const uint64_t state = load_relaxed_sys(&ctl->state);
  if (state != TriggerFifoDescriptor::STATE_RUNNING) {
    return fail(v, ERR_TRANSPORT, ERROR_PROXY_STOPPED, op, p.rank, position, TriggerFifoDescriptor::STATE_RUNNING,
                state);
  }
  if (st == ERR_TIMEOUT) record_error(v, code, op, p.rank, position, want, seen, CMP_GE, d->elapsed);
  return st;
}

// Slow path of a push: the ring looked full at position `last`. Waits until the host has popped enough.
__device__ inline __noinline__ int wait_for_room(const Peer& p, ProxyChannel* ch, uint64_t last, uint32_t capacity,
                                                uint32_t op) {
  const ProxyControl* ctl = control_of(ch);
  Deadline d;
  const uint64_t want = last - capacity + 1;  // the tail that frees `last`'s slot
  for (;;) {
    uint64_t tail = 0;
    for (uint32_t k = 0; k < HOST_POLLS_PER_LOOK; ++k) {
      tail = load_acquire_sys(&ctl->tail);
      if (last < tail + capacity) {
        // Later pushes from this GPU skip the PCIe read; the release carries this acquire's order to them.
        red_max_release_gpu(&ch->tail_cache, tail);
        return OK;
      }
    }
    int st = wait_check(p, ctl, &d, ERROR_PROXY_FIFO_FULL, op, last, want, tail);
    if (st != OK) return st;
  }
}

// Claims `nslots` (1 or 2) positions and waits for room; *first = the first position.
__device__ __forceinline__ int claim(const Peer& p, ProxyChannel* ch, uint32_t nslots, uint32_t capacity, uint32_t op,
                                     uint64_t* first) {
  const uint64_t q = atomicAdd(reinterpret_cast<unsigned long long*>(&ch->head), (unsigned long long)nslots);
  const uint64_t last = q + nslots - 1;
  if (__builtin_expect(last >= load_acquire_gpu(&ch->tail_cache) + capacity, 0)) {
    int st = wait_for_room(p, ch, last, capacity, op);
    if (st != OK) return st;
  }
  *first = q;
  return OK;
}

// Pushes one trigger {w0, w1} (lap bits clear). *position_out = its position. RELEASE: the slot's store is a release
// at system scope (a PUT, whose source the copy engine reads); else relaxed (step 3 above says when that is enough).
template <bool RELEASE>
__device__ inline __noinline__ int push1(const Peer& p, uint32_t op, uint64_t w0, uint64_t w1, uint64_t* position_out) {
  ProxyChannel* ch = channel_of(p);
  // Read-only after set-up: the loads go out beside the atomic and cost one latency together.
  const uint64_t ring = __ldg(reinterpret_cast<const unsigned long long*>(&ch->ring));
  const uint32_t capacity = __ldg(&ch->capacity);
  const uint32_t log2 = __ldg(&ch->capacity_log2);
  uint64_t q;
  int st = claim(p, ch, 1, capacity, op, &q);
  if (st != OK) return st;
  const uint64_t lap = lap_bits(q, log2);
  uint64_t* slot = reinterpret_cast<uint64_t*>(ring + slot_offset(q, capacity));
  if (RELEASE) {
    store_pair_release_sys(slot, w0 | lap, w1 | lap);
  } else {
    store_pair_relaxed_sys(slot, w0 | lap, w1 | lap);
  }
  *position_out = q;
  return OK;
}

// Pushes a two-slot trigger {a0, a1} {b0, b1} at consecutive positions (they may wrap around the ring's end).
__device__ inline __noinline__ int push2(const Peer& p, uint32_t op, uint64_t a0, uint64_t a1, uint64_t b0,
                                         uint64_t b1) {
  ProxyChannel* ch = channel_of(p);
  const uint64_t ring = __ldg(reinterpret_cast<const unsigned long long*>(&ch->ring));
  const uint32_t capacity = __ldg(&ch->capacity);
  const uint32_t log2 = __ldg(&ch->capacity_log2);
  uint64_t q;
  int st = claim(p, ch, 2, capacity, op, &q);
  if (st != OK) return st;
  // One fence orders the data before both slots; each slot is then one relaxed 16-byte store.
  fence_acq_rel_sys();
  const uint64_t lap0 = lap_bits(q, log2);
  const uint64_t lap1 = lap_bits(q + 1, log2);
  store_pair_relaxed_sys(reinterpret_cast<uint64_t*>(ring + slot_offset(q, capacity)), a0 | lap0, a1 | lap0);
  store_pair_relaxed_sys(reinterpret_cast<uint64_t*>(ring + slot_offset(q + 1, capacity)), b0 | lap1, b1 | lap1);
  return OK;
}

// Waits until the proxy has completed every trigger below `want` (its FLUSH wrote done = position + 1).
__device__ inline __noinline__ int wait_done(const Peer& p, uint64_t want, uint32_t op) {
  ProxyChannel* ch = channel_of(p);
  const uint64_t* done = &ch->done;
  uint64_t seen = 0;
  Deadline d;
  for (;;) {
    for (uint32_t k = 0; k < POLLS_PER_LOOK; ++k) {
      seen = load_acquire_sys(done);
      if (seen >= want) return OK;
    }
    int st = wait_check(p, control_of(ch), &d, ERROR_PROXY_FLUSH_TIMEOUT, op, want - 1, want, seen);
    if (st != OK) return st;
  }
}

// Waits until the host has popped `position` (its tail passed it): the FIFO round trip, for benchmarks.
__device__ inline __noinline__ int wait_popped(const Peer& p, uint64_t position) {
  const ProxyControl* ctl = control_of(channel_of(p));
  Deadline d;
  for (;;) {
    uint64_t tail = 0;
    for (uint32_t k = 0; k < HOST_POLLS_PER_LOOK; ++k) {
      tail = load_acquire_sys(&ctl->tail);
      if (tail > position) return OK;
    }
    int st = wait_check(p, ctl, &d, ERROR_PROXY_FLUSH_TIMEOUT, OP_FLUSH, position, position + 1, tail);
    if (st != OK) return st;
  }
}

// ---- field checks: before the claim, so a rejected call never reaches the ring.

__device__ __forceinline__ int check_put_fields(const Peer& p, uint32_t op, uint64_t dst, uint64_t src,
                                                uint64_t bytes) {
  using namespace TriggerFifoDescriptor;
  if (__builtin_expect(!put_fits(dst, src, bytes, MEMORY_HEAP, MEMORY_HEAP), 0)) {
    const uint64_t worst = dst > src ? (dst > bytes ? dst : bytes) : (src > bytes ? src : bytes);
    return fail(p.view, ERR_RANGE, ERROR_TRIGGER_FIELD, op, p.rank, dst, 1ull << OFFSET_BITS, worst);
  }
  return OK;
}

__device__ __forceinline__ int check_signal_fields(const Peer& p, uint32_t op, uint64_t word, uint32_t signal_op) {
  using namespace TriggerFifoDescriptor;
  if (__builtin_expect(!signal_fits(word, signal_op, MEMORY_HEAP), 0)) {
    return fail(p.view, ERR_RANGE, ERROR_TRIGGER_FIELD, op, p.rank, word, 1ull << OFFSET_BITS, word);
  }
  return OK;
}

__device__ __forceinline__ int check_put(const Peer& p, uint32_t op, uint64_t dst, uint64_t src, uint64_t bytes) {
  int st = check_range(p.view, p.heap_size, op, p.rank, dst, bytes);
  if (st == OK) st = check_range(p.view, p.heap_size, op, -1, src, bytes);
  if (st == OK) st = check_put_fields(p, op, dst, src, bytes);
  return st;
}

__device__ __forceinline__ int check_signal(const Peer& p, uint32_t op, uint64_t word, uint32_t signal_op) {
  int st = check_word(p.view, p.heap_size, op, p.rank, word);
  if (st == OK) st = check_signal_fields(p, op, word, signal_op);
  return st;
}

// ---- the calls, thread scope (detail/dispatch.cuh adds the warp and block forms around them).

// An 8-byte put between 8-byte aligned offsets travels inside its trigger, as a SET of the destination word: the
// copy-engine handler writes it with one stream write, the verbs handler with one inline RDMA WRITE, instead of a
// copy the engine has to start (most of an 8-byte put_signal round trip: 21.5 us against 11.1 for a bare signal on
// 2 H100s). The value is read when the call is made, which a put allows: its source must not change before a flush.
__device__ __forceinline__ bool carried_inline(uint64_t dst, uint64_t src, uint64_t bytes) {
  return bytes == 8 && ((dst | src) & 7) == 0;
}

// The 8 bytes at `src` in this rank's heap, as this thread sees them (its own stores, and after a barrier its warp's
// or block's: the _warp and _block forms push from one thread after one).
__device__ __forceinline__ uint64_t inline_value(const Peer& p, uint64_t src) {
  return *reinterpret_cast<const uint64_t*>(p.local_heap + src);
}

// PUT: the copy engine copies [src, src + bytes) of this rank's heap to the peer's heap at dst. Returns once the
// trigger is queued: keep the source unchanged until a flush (or the peer's signal) says the copy is done.
__device__ inline __noinline__ int put(const Peer& p, uint32_t op, uint64_t dst, uint64_t src, uint64_t bytes) {
  using namespace TriggerFifoDescriptor;
  int st = check_put(p, op, dst, src, bytes);
  if (st != OK) return st;
  uint64_t q;
  if (carried_inline(dst, src, bytes)) {
    // Reads nothing of this GPU's memory later, so stored relaxed as a signal's trigger is.
    const uint64_t value = inline_value(p, src);
    return push1<false>(p, op, signal_word0(KIND_SIGNAL, SIGNAL_OP_SET, dst, value, MEMORY_HEAP),
                        signal_word1(value), &q);
  }
  return push1<true>(p, op, put_word0(KIND_PUT, dst, bytes), put_word1(src, bytes, MEMORY_HEAP, MEMORY_HEAP), &q);
}

// PUT_SIGNAL: the put, then the signal, stream-ordered behind the copy on the proxy's side.
__device__ inline __noinline__ int put_signal(const Peer& p, uint64_t dst, uint64_t src, uint64_t bytes, uint64_t sig,
                                              uint32_t signal_op, uint64_t value) {
  using namespace TriggerFifoDescriptor;
  int st = check_put(p, OP_PUT_SIGNAL, dst, src, bytes);
  if (st == OK) st = check_signal(p, OP_PUT_SIGNAL, sig, signal_op);
  if (st != OK) return st;
  if (carried_inline(dst, src, bytes)) {
    // Two one-slot SIGNAL triggers, the data's SET first: the proxy runs them in order on one stream (one QP), and
    // push2's fence still makes the pair a release of what this thread wrote before.
    const uint64_t data = inline_value(p, src);
    return push2(p, OP_PUT_SIGNAL, signal_word0(KIND_SIGNAL, SIGNAL_OP_SET, dst, data, MEMORY_HEAP),
                 signal_word1(data), signal_word0(KIND_SIGNAL, signal_op, sig, value, MEMORY_HEAP),
                 signal_word1(value));
  }
  return push2(p, OP_PUT_SIGNAL, put_word0(KIND_PUT_SIGNAL, dst, bytes),
               put_word1(src, bytes, MEMORY_HEAP, MEMORY_HEAP),
               signal_word0(KIND_SIGNAL, signal_op, sig, value, MEMORY_HEAP), signal_word1(value));
}

// SIGNAL (op = OP_SIGNAL) or ATOMIC_ADD (op = OP_ATOMIC_ADD, signal_op = SIGNAL_OP_ADD) on the peer's word.
__device__ inline __noinline__ int signal(const Peer& p, uint32_t op, uint64_t word, uint32_t signal_op,
                                          uint64_t value) {
  using namespace TriggerFifoDescriptor;
  int st = check_signal(p, op, word, signal_op);
  if (st != OK) return st;
  const uint32_t kind = op == OP_ATOMIC_ADD ? KIND_ATOMIC_ADD : KIND_SIGNAL;
  uint64_t q;
  return push1<false>(p, op, signal_word0(kind, signal_op, word, value, MEMORY_HEAP), signal_word1(value), &q);
}

// FLUSH: returns once everything pushed to this channel before it has completed at the peer.
__device__ inline __noinline__ int flush(const Peer& p, uint32_t op) {
  using namespace TriggerFifoDescriptor;
  uint64_t q;
  int st = push1<false>(p, op, control_word0(KIND_FLUSH), 0, &q);
  if (st != OK) return st;
  return wait_done(p, q + 1, op);
}

// NOP: popped and dropped by the proxy; for measuring the FIFO alone. *position_out = its position. `release`:
// stored as a PUT's trigger is (released), else as a signal's (relaxed).
__device__ __forceinline__ int push_nop(const Peer& p, uint64_t cookie, bool release, uint64_t* position_out) {
  using namespace TriggerFifoDescriptor;
  return release ? push1<true>(p, OP_FLUSH, control_word0(KIND_NOP), nop_word1(cookie), position_out)
                 : push1<false>(p, OP_FLUSH, control_word0(KIND_NOP), nop_word1(cookie), position_out);
}

}  // namespace proxy

namespace detail {

// Flushes every proxy channel of this rank: all FLUSH triggers are pushed first, then waited for, so the waits
// overlap. Channels this kernel did not use cost one trigger each.
__device__ inline __noinline__ int quiet_proxies(const Local& me) {
  constexpr int GROUP = 8;
  const DeviceView* v = me.view;
  const int n = v->nranks;
  for (int first = 0; first < n; first += GROUP) {
    uint64_t want[GROUP];
    int peer[GROUP];
    int count = 0;
    for (int r = first; r < n && r < first + GROUP; ++r) {
      if (v->peers[r].transport != TRANSPORT_PROXY) continue;
      const Peer p = peer_of(v, r);
      uint64_t q;
      int st = proxy::push1<false>(p, OP_QUIET, proxy::control_word0(proxy::TriggerFifoDescriptor::KIND_FLUSH), 0, &q);
      if (st != OK) return st;
      want[count] = q + 1;
      peer[count] = r;
      ++count;
    }
    for (int i = 0; i < count; ++i) {
      int st = proxy::wait_done(peer_of(v, peer[i]), want[i], OP_QUIET);
      if (st != OK) return st;
    }
  }
  return OK;
}

}  // namespace detail

namespace proxy {

// The proxy's calls as the dispatcher makes them (core/backend.cuh).
struct backend : detail::Offers {
  static constexpr bool INDIRECT = true;
  static constexpr bool QUIET = true;

  __device__ static __forceinline__ bool serves(uint32_t transport) { return transport == TRANSPORT_PROXY; }

  __device__ static __forceinline__ int put(const Peer& p, uint32_t op, uint64_t dst, uint64_t src, uint64_t bytes) {
    return proxy::put(p, op, dst, src, bytes);
  }

  __device__ static __forceinline__ int put_signal(const Peer& p, uint64_t dst, uint64_t src, uint64_t bytes,
                                                   uint64_t sig, uint32_t sig_op, uint64_t value) {
    if (sig_op == SIGNAL_ADD && (p.handle & PEER_NIC_ATOMICS) != 0) {
      return fail(p.view, ERR_TRANSPORT, ERROR_MIXED_ATOMICS, OP_PUT_SIGNAL, p.rank, sig, SIGNAL_ADD, p.transport);
    }
    return proxy::put_signal(p, dst, src, bytes, sig, sig_op, value);
  }

  __device__ static __forceinline__ int signal(const Peer& p, uint32_t op, uint64_t sig, uint32_t sig_op,
                                               uint64_t value) {
    // The proxy adds with a GPU atomic (a kernel on its stream): refused where the target's words get NIC atomics.
    if (sig_op == SIGNAL_ADD && (p.handle & PEER_NIC_ATOMICS) != 0) {
      return fail(p.view, ERR_TRANSPORT, ERROR_MIXED_ATOMICS, op, p.rank, sig, SIGNAL_ADD, p.transport);
    }
    return proxy::signal(p, op, sig, sig_op, value);
  }

  // The proxy executes a channel's triggers in order on one stream, so earlier puts are ordered already; the fence
  // is for this thread's own loads and stores, which a signal's relaxed trigger would not order (fence + signal is
  // a release on every transport: a receiver that grants ring slots back reads them first).
  __device__ static __forceinline__ int fence(const Peer&) {
    fence_acq_rel_sys();
    return OK;
  }

  __device__ static __forceinline__ int flush(const Peer& p) { return proxy::flush(p, OP_FLUSH); }

  // A rank with proxy peers has VIEW_FLAG_PROXY in its view: a flag in the header, read with the fields local_of()
  // already loads, so a world without proxy peers pays nothing for it.
  __device__ static __forceinline__ bool quiet_needed(uint32_t view_flags) {
    return __builtin_expect((view_flags & VIEW_FLAG_PROXY) != 0, 0);
  }

  __device__ static __forceinline__ int quiet(const Local& me) { return detail::quiet_proxies(me); }
};

}  // namespace proxy

static_assert(SIGNAL_SET == proxy::TriggerFifoDescriptor::SIGNAL_OP_SET &&
                  SIGNAL_ADD == proxy::TriggerFifoDescriptor::SIGNAL_OP_ADD,
              "signal ops travel in proxy triggers unchanged");

}  // namespace gda4j

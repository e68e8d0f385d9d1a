// gda4j device API: the one header a kernel includes (#include <gda4j/gda4j.cuh>, nvcc -I device-ptx/include).
//
// The headers by layer; each includes only the layers below it:
//   gda4j.cuh              this file: the public API (put, get, signal, atomic_add, put_signal, put_inline, fence,
//                          flush, quiet, wait_until, wait_inline; is_direct, sets_land_in_order, prefers_few_puts and
//                          lane_id for kernels that move data themselves) and its contract. A user reads only this
//                          file.
//   transports.def         the table of transports: each one's name, code and capabilities (PeerEntry.caps)
//   detail/dispatch.cuh    the one dispatcher: out-of-line calls that go to the back end of a peer's transport
//   transport/<name>/      one folder per transport with device code (p2p, proxy, ibgda; transport/backends.cuh
//                          lists them): its back end, its bytes shared with the host, its error codes
//   core/                  what every layer uses: the handles (Peer, Local), the direct path of DIRECT peers,
//                          memory-model wrappers, the error record, the cooperative copy, the one deadline and poll
//                          policy of every wait (core/deadline.cuh), what a back end offers (core/backend.cuh)
//   layout/                bytes shared with the host (view, inline slot, mlx5 WQEs), each mirrored by a Java
//                          *Descriptor and checked by a layout test
//   moe/                   the MoE kernels' device code, on top of this API
// Names in gda4j::detail and in a transport's namespace (gda4j::<name>) are internal.
//
// Kernels take the rank's DeviceView pointer (Rank.deviceView()) and call the functions below on it.
//
// Handles: resolve a peer once per kernel with `Peer p = peer_of(view, r)` and this rank's side with
// `Local me = local_of(view)`; the calls on handles read no memory but the data they move (a view read after an
// acquire costs about half a microsecond over NVLink). The forms taking (view, peer, ...) resolve on every call and
// are there for convenience.
//
// Every call returns OK (0) or a negative ERR_* status; on failure the rank's ErrorRecord names the call, the peer,
// the heap offset and the values involved, the abort flag stops every spinning call, and the host throws an
// exception with that text. Offsets address the symmetric heap: the same offset is valid on every rank.
//
// Scopes: put and put_signal come in thread, _warp and _block forms. In the _warp form every lane of the warp calls
// with the same arguments, in the _block form every thread of the block does, and the data is shared out among
// them. Signals and waits are issued by one thread.
//
// Ordering, per peer:
//  - put_signal: the signal is a release at system scope after the whole scope's data, so a peer whose wait_until
//    (an acquire) sees the signal sees the data.
//  - signal and atomic_add are relaxed: they order nothing. To order a signal after earlier puts, call fence(peer)
//    first (fence + relaxed store is a release), or use put_signal.
//  - Atomics on one word go through one path (NVSHMEM's rule): a NIC's atomic is not atomic with GPU atomics on the
//    same word. A rank with IBGDA links takes ADDs only through a NIC: its own SIGNAL_ADD / atomic_add / put_signal
//    ADD to itself are ATOMIC_FAs on its loopback QP (complete at flush(self) or quiet), and an ADD to it from a p2p
//    or proxy peer fails with ERROR_MIXED_ATOMICS. Do not add to such words with your own GPU atomics either.
//  - put_inline carries up to 8 bytes inside a 16-byte slot with the sequence number in each half
//    (layout/inline_slot.cuh); wait_inline returns the value once both halves carry the same sequence, at or after
//    the one waited for. No fence is needed: the fastest small message. A sender may overwrite the slot before the
//    reader looked (the reader then gets a later message, whole, never halves of two).
//  - fence(peer): earlier puts to `peer` are ordered before later ones. flush(peer): every earlier call to `peer` is
//    complete. quiet(): every earlier call to every peer is complete and visible system-wide.
//  - Several QPs per peer (ibgda, GDA4J_IBGDA_QPS_PER_PEER > 1): each QP keeps its work in order, none orders
//    another's. A Peer posts on the QP of the calling warp, or on the one with_channel(p, c) binds it to, so one
//    warp's (one channel's) calls to a peer are in order and put_signal's signal covers its data. A signal that must
//    cover data another warp or channel put needs fence(peer) between them on an unbound Peer (it waits until the
//    peer's other QPs have completed what was posted on them), or both on one channel. fence on a bound Peer orders
//    its channel only (free). quiet() and flush() complete every QP.
//
// Transports: every call dispatches on the peer's transport once, with the branch predicted for DIRECT peers (p2p,
// self) and the other back ends out of line, so a p2p call costs what it did before they existed.
//  - p2p, self: this GPU's loads and stores; a put is complete when it returns.
//  - proxy (transport/proxy/): the call pushes a 16-byte trigger to a host proxy thread, which executes the
//    channel's triggers in order with the copy engine. The ordering rules above hold; in addition a put returns once
//    queued, so its source must stay unchanged until a flush/quiet (or the peer's signal) says the copy is done, like
//    nvshmem_put_nbi (an 8-byte put between aligned offsets reads its source at the call and travels in the trigger
//    instead). put_inline needs direct stores and fails with ERROR_UNSUPPORTED_TRANSPORT. The _warp and
//    _block forms push one trigger from lane/thread 0 after a barrier and return its status to every thread.
//    quiet() pushes a FLUSH to every proxy peer: call it from one thread (after a barrier), not from all of them.
//    The back end is out of line but in the kernel's call graph, and a kernel gets the registers of its most
//    demanding callee: where occupancy matters, bound the kernel with __launch_bounds__ (see gda4j_put_bandwidth).
#pragma once
#include <stdint.h>
#include "detail/dispatch.cuh"
#include "core/deadline.cuh"

namespace gda4j {

// ---- what a peer is, for kernels that move data themselves (the MoE kernels do): its transport's capabilities
// (PeerEntry.caps, the CAP_* bits of transports.def; Java's io.gda4j.transport.Capability has the same names).
// DIRECT: the peer's heap is mapped here at p.heap, and a kernel may load and store it like its own memory (fence(p)
// then orders those stores before a signal, as it does puts). Otherwise a put is handed to the transport's back end,
// which may read its source later (IBGDA: when the NIC gets to the work request): the source must be whole before the
// put is made, and one put per contiguous run beats many.
__device__ __forceinline__ bool is_direct(const Peer& p) { return detail::is_direct(p); }
// SETS_LAND_IN_ORDER: a SET of a counter with one writer (this thread) reaches p as reliably as an ADD would, because
// one thread's signals to one word land in the order it made them (direct peers: stores to one word; proxy: a
// channel's triggers run in order on one stream), so the writer may SET the new total, which over the proxy is a
// stream write where an ADD is a kernel launch. False over IBGDA: a SET is an 8-byte RDMA WRITE, which a QP with
// relaxed ordering may place out of order (and refuses: ERROR_SET_SIGNAL_RELAXED), so such a counter takes ADDs of
// the difference.
__device__ __forceinline__ bool sets_land_in_order(const Peer& p) { return (p.caps & CAP_SETS_LAND_IN_ORDER) != 0; }
// PREFERS_FEW_PUTS: each put, signal or put_signal to p costs a host call (proxy: the proxy thread makes a driver
// call per trigger, microseconds each), so a kernel should gather what it sends p into few large contiguous puts
// rather than one per run. False where a put is a GPU store (direct peers) or a work request the GPU writes itself
// (IBGDA). Such a peer is never DIRECT (layout/view.cuh checks every row): saying so lets the compiler leave the
// direct path out of code that asked this first, as it could when both were tests of one transport code.
__device__ __forceinline__ bool prefers_few_puts(const Peer& p) {
  const bool few = (p.caps & CAP_PREFERS_FEW_PUTS) != 0;
  if (few) __builtin_assume((p.caps & CAP_DIRECT) == 0);
  return few;
}
// This thread's lane in its warp: how the _warp forms share their data out, and how a kernel can too.
__device__ __forceinline__ uint32_t lane_id() { return detail::lane_id(); }
// `p` bound to channel `c`: over a peer reached by several paths (a back end with channels: several QPs), every
// call on the result takes path c % paths, so calls of one channel from any warp are in order, and fence on it orders
// that channel only. Other transports ignore the channel. Bind once per kernel, with the peer.
__device__ __forceinline__ Peer with_channel(Peer p, uint32_t c) {
  p.handle = detail::channel_handle(p, c);
  return p;
}

// ---- put: copy `bytes` from this rank's heap at `src_offset` to the peer's heap at `dst_offset`.
// Not ordered with anything by itself: follow with fence/quiet, or use put_signal.

__device__ __forceinline__ int put(const Peer& p, uint64_t dst_offset, uint64_t src_offset, uint64_t bytes) {
  if (__builtin_expect(!detail::is_direct(p), 0)) {
    return detail::put_indirect(GDA4J_PEER_FIELDS(p), OP_PUT, dst_offset, src_offset, bytes);
  }
  int st = detail::check_put(p, OP_PUT, dst_offset, src_offset, bytes);
  if (st == OK) detail::copy(p, dst_offset, src_offset, bytes, 0, 1);
  return st;
}

__device__ __forceinline__ int put_warp(const Peer& p, uint64_t dst_offset, uint64_t src_offset, uint64_t bytes) {
  if (__builtin_expect(!detail::is_direct(p), 0)) {
    return detail::put_indirect_warp(GDA4J_PEER_FIELDS(p), OP_PUT, dst_offset, src_offset, bytes);
  }
  int st = detail::check_put(p, OP_PUT, dst_offset, src_offset, bytes);
  if (st == OK) detail::copy(p, dst_offset, src_offset, bytes, detail::lane_id(), 32);
  return st;
}

__device__ __forceinline__ int put_block(const Peer& p, uint64_t dst_offset, uint64_t src_offset, uint64_t bytes) {
  if (__builtin_expect(!detail::is_direct(p), 0)) {
    return detail::put_indirect_block(GDA4J_PEER_FIELDS(p), OP_PUT, dst_offset, src_offset, bytes);
  }
  int st = detail::check_put(p, OP_PUT, dst_offset, src_offset, bytes);
  if (st == OK) detail::copy(p, dst_offset, src_offset, bytes, detail::block_thread_id(), detail::block_thread_count());
  return st;
}

// ---- signal: set or add `value` to the peer's 64-bit word at `sig_offset`. Relaxed: see the ordering notes.

__device__ __forceinline__ int signal(const Peer& p, uint64_t sig_offset, uint32_t op, uint64_t value) {
  if (__builtin_expect(!detail::is_direct(p), 0)) {
    return detail::signal_indirect(GDA4J_PEER_FIELDS(p), OP_SIGNAL, sig_offset, op, value);
  }
  int st = detail::check_signal(p, OP_SIGNAL, sig_offset, op);
  if (st != OK) return st;
  if (detail::add_via_nic(p, op)) {
    return detail::add_via_loopback(GDA4J_PEER_FIELDS(p), OP_SIGNAL, sig_offset, value, detail::SCOPE_THREAD);
  }
  detail::signal_relaxed(p, sig_offset, op, value);
  return OK;
}

// ---- atomic_add: relaxed atomic add on the peer's 64-bit word (an alias of signal ADD for direct peers; other
// transports implement it as a NIC atomic).
__device__ __forceinline__ int atomic_add(const Peer& p, uint64_t offset, uint64_t value) {
  if (__builtin_expect(!detail::is_direct(p), 0)) {
    return detail::signal_indirect(GDA4J_PEER_FIELDS(p), OP_ATOMIC_ADD, offset, SIGNAL_ADD, value);
  }
  int st = detail::check_signal(p, OP_ATOMIC_ADD, offset, SIGNAL_ADD);
  if (st != OK) return st;
  if (detail::add_via_nic(p, SIGNAL_ADD)) {
    return detail::add_via_loopback(GDA4J_PEER_FIELDS(p), OP_ATOMIC_ADD, offset, value, detail::SCOPE_THREAD);
  }
  red_add_relaxed_sys(detail::peer_word(p, offset), value);
  return OK;
}

// ---- put_signal: the data, then the signal, released after the data (the whole scope's data).

__device__ __forceinline__ int put_signal(const Peer& p, uint64_t dst_offset, uint64_t src_offset, uint64_t bytes,
                                          uint64_t sig_offset, uint32_t op, uint64_t value) {
  if (__builtin_expect(!detail::is_direct(p), 0)) {
    return detail::put_signal_indirect(GDA4J_PEER_FIELDS(p), dst_offset, src_offset, bytes, sig_offset, op, value);
  }
  int st = detail::check_put(p, OP_PUT_SIGNAL, dst_offset, src_offset, bytes);
  if (st == OK) st = detail::check_signal(p, OP_PUT_SIGNAL, sig_offset, op);
  if (st != OK) return st;
  detail::copy(p, dst_offset, src_offset, bytes, 0, 1);
  if (detail::add_via_nic(p, op)) {
    return detail::add_via_loopback(GDA4J_PEER_FIELDS(p), OP_PUT_SIGNAL, sig_offset, value, detail::SCOPE_THREAD);
  }
  detail::signal_release(p, sig_offset, op, value);
  return OK;
}

__device__ __forceinline__ int put_signal_warp(const Peer& p, uint64_t dst_offset, uint64_t src_offset, uint64_t bytes,
                                               uint64_t sig_offset, uint32_t op, uint64_t value) {
  if (__builtin_expect(!detail::is_direct(p), 0)) {
    return detail::put_signal_indirect_warp(GDA4J_PEER_FIELDS(p), dst_offset, src_offset, bytes, sig_offset, op, value);
  }
  int st = detail::check_put(p, OP_PUT_SIGNAL, dst_offset, src_offset, bytes);
  if (st == OK) st = detail::check_signal(p, OP_PUT_SIGNAL, sig_offset, op);
  if (st != OK) return st;
  uint32_t lane = detail::lane_id();
  detail::copy(p, dst_offset, src_offset, bytes, lane, 32);
  if (detail::add_via_nic(p, op)) {
    return detail::add_via_loopback(GDA4J_PEER_FIELDS(p), OP_PUT_SIGNAL, sig_offset, value, detail::SCOPE_WARP);
  }
  // The warp barrier makes every lane's stores visible to lane 0, whose release then covers them (cumulativity).
  __syncwarp();
  if (lane == 0) detail::signal_release(p, sig_offset, op, value);
  return OK;
}

__device__ __forceinline__ int put_signal_block(const Peer& p, uint64_t dst_offset, uint64_t src_offset, uint64_t bytes,
                                                uint64_t sig_offset, uint32_t op, uint64_t value) {
  if (__builtin_expect(!detail::is_direct(p), 0)) {
    return detail::put_signal_indirect_block(GDA4J_PEER_FIELDS(p), dst_offset, src_offset, bytes, sig_offset, op,
                                             value);
  }
  int st = detail::check_put(p, OP_PUT_SIGNAL, dst_offset, src_offset, bytes);
  if (st == OK) st = detail::check_signal(p, OP_PUT_SIGNAL, sig_offset, op);
  if (st != OK) return st;
  uint32_t t = detail::block_thread_id();
  detail::copy(p, dst_offset, src_offset, bytes, t, detail::block_thread_count());
  if (detail::add_via_nic(p, op)) {
    return detail::add_via_loopback(GDA4J_PEER_FIELDS(p), OP_PUT_SIGNAL, sig_offset, value, detail::SCOPE_BLOCK);
  }
  // bar.sync orders the block's stores before thread 0's release at system scope.
  __syncthreads();
  if (t == 0) detail::signal_release(p, sig_offset, op, value);
  return OK;
}

// ---- put_inline: up to 8 bytes carried in the peer's 16-byte slot at `slot_offset` (16-byte aligned) as two
// halves {lo32, seq} {hi32, seq} (layout/inline_slot.cuh). `seq` must be nonzero and grow with every message to the
// slot (slots start zeroed).
__device__ __forceinline__ int put_inline(const Peer& p, uint64_t slot_offset, uint64_t value, uint32_t seq) {
  // Needs the peer's memory under this GPU's stores: no other transport can keep the LL slot's promise.
  if (__builtin_expect(!detail::is_direct(p), 0)) {
    return detail::put_inline_indirect(GDA4J_PEER_FIELDS(p), slot_offset, value, seq);
  }
  int st = check_word(p.view, p.heap_size, OP_PUT_INLINE, p.rank, slot_offset, InlineSlotDescriptor::SIZE);
  if (st != OK) return st;
  store_slot_relaxed_sys(reinterpret_cast<uint64_t*>(p.heap + slot_offset),
                         InlineSlotDescriptor::half((uint32_t)value, seq),
                         InlineSlotDescriptor::half((uint32_t)(value >> 32), seq));
  return OK;
}

// ---- get (an RDMA READ over IBGDA, the transport that offers it): [src, src + bytes) of the peer's heap into
// [dst, ...) of this rank's; the data is in place after quiet. Other peers have no get in the device API yet: this
// returns ERR_TRANSPORT for them.
__device__ __forceinline__ int get(const Peer& p, uint64_t dst_offset, uint64_t src_offset, uint64_t bytes) {
  return detail::get(p, dst_offset, src_offset, bytes);
}

// ---- fence / flush / quiet. For direct peers each is a system-scope fence: the stores are this thread's own, so
// ordering them is all a later store needs, and a fence after them is all completion needs. For proxy peers fence is
// the same system-scope fence (triggers run in order, so it is there for the thread's own accesses before a relaxed
// signal) and flush/quiet push a FLUSH and wait until the proxy has completed everything before it. For IBGDA
// peers fence is free on one QP (an RC QP keeps its WQEs in order, and a WQE after an outstanding get carries the
// mlx5 fence bit, so it waits for the READ's data); over several QPs per peer it drains the peer's other QPs (on a
// Peer bound to a channel: free, that channel's QP only); flush/quiet drain the QPs (then a PCIe flush through the
// null MR where configured).
__device__ __forceinline__ int fence(const Peer& p) {
  if (__builtin_expect(!detail::is_direct(p), 0)) return detail::fence_indirect(GDA4J_PEER_FIELDS(p));
  fence_acq_rel_sys();
  return OK;
}

// Every earlier put, put_signal, signal and atomic_add to `p` (from any thread, if they came before in a barrier's
// order) is complete: the data is at the peer.
__device__ __forceinline__ int flush(const Peer& p) {
  if (__builtin_expect(!detail::is_direct(p), 0)) return detail::flush_indirect(GDA4J_PEER_FIELDS(p));
  fence_acq_rel_sys();
  if (__builtin_expect(p.transport == TRANSPORT_SELF && (p.handle & PEER_NIC_ATOMICS) != 0, 0)) {
    return detail::flush_loopback(GDA4J_PEER_FIELDS(p));  // this rank's own ADDs went through its loopback object
  }
  return OK;
}

__device__ __forceinline__ int quiet(const Local& me) {
  fence_acq_rel_sys();
  return detail::quiet_transports(me);
}

// ---- waits on this rank's heap. Spins give up after the view's timeout (recording ERROR_WAIT_TIMEOUT and raising
// the abort flag) or when the abort flag is raised elsewhere (ERR_ABORTED, no record).

// Spins until this rank's word at `sig_offset` satisfies `word <cmp> value`. An acquire: what the signaller wrote
// before a release signal (put_signal, or fence + signal) is visible after it returns OK.
__device__ __forceinline__ int wait_until(const Local& me, uint64_t sig_offset, uint32_t cmp, uint64_t value,
                                          uint64_t* seen_out = nullptr) {
  int st = check_word(me.view, me.heap_size, OP_WAIT_UNTIL, me.rank, sig_offset);
  if (st != OK) return st;
  const uint64_t* word = reinterpret_cast<const uint64_t*>(me.heap + sig_offset);
  Deadline d;
  uint64_t seen;
  for (;;) {
    for (uint32_t batch = 0; batch < POLLS_PER_LOOK; batch += POLL_UNROLL) {
#pragma unroll
      for (uint32_t k = 0; k < POLL_UNROLL; ++k) {
        seen = load_acquire_sys(word);
        if (compare(seen, cmp, value)) {
          if (seen_out) *seen_out = seen;
          return OK;
        }
      }
    }
    st = look(me.abort_flag, me.timeout_ns, &d);
    if (st == ERR_TIMEOUT) {
      record_error(me.view, ERROR_WAIT_TIMEOUT, OP_WAIT_UNTIL, me.rank, sig_offset, value, seen, cmp, d.elapsed);
    }
    if (st != OK) break;
  }
  if (seen_out) *seen_out = seen;
  return st;
}

// One thread waits, then the whole block continues with what the signal guards visible (bar.sync after acquire).
__device__ __forceinline__ int wait_until_block(const Local& me, uint64_t sig_offset, uint32_t cmp, uint64_t value) {
  __shared__ int status;
  if (detail::block_thread_id() == 0) status = wait_until(me, sig_offset, cmp, value);
  __syncthreads();
  int st = status;
  __syncthreads();
  return st;
}

// Spins until this rank's inline slot at `slot_offset` holds one whole message with sequence `seq` or a later one:
// both halves carry the same sequence (halves of two messages carry two), and it is at or after `seq` (wrap-safe).
// The 8-byte value arrives in *value_out, and the sequence it carried in *seq_out where given (a later message may
// have overwritten `seq`'s before this look).
__device__ __forceinline__ int wait_inline(const Local& me, uint64_t slot_offset, uint32_t seq, uint64_t* value_out,
                                           uint32_t* seq_out = nullptr) {
  int st = check_word(me.view, me.heap_size, OP_WAIT_UNTIL, me.rank, slot_offset, InlineSlotDescriptor::SIZE);
  if (st != OK) return st;
  const uint64_t* slot = reinterpret_cast<const uint64_t*>(me.heap + slot_offset);
  Deadline d;
  uint64_t lo, hi;
  for (;;) {
    for (uint32_t batch = 0; batch < POLLS_PER_LOOK; batch += POLL_UNROLL) {
#pragma unroll
      for (uint32_t k = 0; k < POLL_UNROLL; ++k) {
        load_slot_relaxed_sys(slot, lo, hi);
        if (InlineSlotDescriptor::is_whole_at_or_after(lo, hi, seq)) {
          *value_out = InlineSlotDescriptor::value_of(lo, hi);
          if (seq_out) *seq_out = InlineSlotDescriptor::seq_of(lo);
          return OK;
        }
      }
    }
    st = look(me.abort_flag, me.timeout_ns, &d);
    if (st == ERR_TIMEOUT) {
      // The record's `seen`: the low half's sequence, or the high half's where the low one is already there.
      const uint32_t s0 = InlineSlotDescriptor::seq_of(lo);
      record_error(me.view, ERROR_WAIT_TIMEOUT, OP_WAIT_UNTIL, me.rank, slot_offset, seq,
                   (int32_t)(s0 - seq) < 0 ? s0 : InlineSlotDescriptor::seq_of(hi), CMP_GE, d.elapsed);
    }
    if (st != OK) return st;
  }
}

// ---- convenience forms on the view: resolve, then call the handle form.

__device__ __forceinline__ int put(const DeviceView* v, int peer, uint64_t dst, uint64_t src, uint64_t bytes) {
  return put(peer_of(v, peer), dst, src, bytes);
}
__device__ __forceinline__ int put_warp(const DeviceView* v, int peer, uint64_t dst, uint64_t src, uint64_t bytes) {
  return put_warp(peer_of(v, peer), dst, src, bytes);
}
__device__ __forceinline__ int put_block(const DeviceView* v, int peer, uint64_t dst, uint64_t src, uint64_t bytes) {
  return put_block(peer_of(v, peer), dst, src, bytes);
}
__device__ __forceinline__ int signal(const DeviceView* v, int peer, uint64_t sig, uint32_t op, uint64_t value) {
  return signal(peer_of(v, peer), sig, op, value);
}
__device__ __forceinline__ int atomic_add(const DeviceView* v, int peer, uint64_t offset, uint64_t value) {
  return atomic_add(peer_of(v, peer), offset, value);
}
__device__ __forceinline__ int put_signal(const DeviceView* v, int peer, uint64_t dst, uint64_t src, uint64_t bytes,
                                          uint64_t sig, uint32_t op, uint64_t value) {
  return put_signal(peer_of(v, peer), dst, src, bytes, sig, op, value);
}
__device__ __forceinline__ int put_signal_warp(const DeviceView* v, int peer, uint64_t dst, uint64_t src,
                                               uint64_t bytes, uint64_t sig, uint32_t op, uint64_t value) {
  return put_signal_warp(peer_of(v, peer), dst, src, bytes, sig, op, value);
}
__device__ __forceinline__ int put_signal_block(const DeviceView* v, int peer, uint64_t dst, uint64_t src,
                                                uint64_t bytes, uint64_t sig, uint32_t op, uint64_t value) {
  return put_signal_block(peer_of(v, peer), dst, src, bytes, sig, op, value);
}
__device__ __forceinline__ int put_inline(const DeviceView* v, int peer, uint64_t slot, uint64_t value, uint32_t seq) {
  return put_inline(peer_of(v, peer), slot, value, seq);
}
__device__ __forceinline__ int fence(const DeviceView* v, int peer) { return fence(peer_of(v, peer)); }
__device__ __forceinline__ int flush(const DeviceView* v, int peer) { return flush(peer_of(v, peer)); }
__device__ __forceinline__ int quiet(const DeviceView* v) { return quiet(local_of(v)); }
__device__ __forceinline__ int wait_until(const DeviceView* v, uint64_t sig, uint32_t cmp, uint64_t value,
                                          uint64_t* seen_out = nullptr) {
  return wait_until(local_of(v), sig, cmp, value, seen_out);
}
__device__ __forceinline__ int wait_until_block(const DeviceView* v, uint64_t sig, uint32_t cmp, uint64_t value) {
  return wait_until_block(local_of(v), sig, cmp, value);
}
__device__ __forceinline__ int wait_inline(const DeviceView* v, uint64_t slot, uint32_t seq, uint64_t* value_out,
                                           uint32_t* seq_out = nullptr) {
  return wait_inline(local_of(v), slot, seq, value_out, seq_out);
}

}  // namespace gda4j

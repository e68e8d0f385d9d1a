// gda4j device API. Include this in your kernels and pass the rank's DeviceView pointer (Rank.deviceView()).
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
//  - put_inline carries up to 8 bytes inside a 16-byte slot with the sequence number in each half (inline_slot.cuh);
//    wait_inline returns the value once both halves carry the same sequence, at or after the one waited for. No
//    fence is needed: the fastest small message. A sender may overwrite the slot before the reader looked (the
//    reader then gets a later message, whole, never halves of two).
//  - fence(peer): earlier puts to `peer` are ordered before later ones. flush(peer): every earlier call to `peer` is
//    complete. quiet(): every earlier call to every peer is complete and visible system-wide.
//
// Transports: every call dispatches on the peer's transport once, with the branch predicted for direct (p2p/self)
// peers and the other back ends out of line, so a p2p call costs what it did before they existed.
//  - p2p, self: this GPU's loads and stores; a put is complete when it returns.
//  - proxy (gda4j/proxy.cuh): the call pushes a 16-byte trigger to a host proxy thread, which executes the channel's
//    triggers in order with the copy engine. The ordering rules above hold; in addition a put returns once queued,
//    so its source must stay unchanged until a flush/quiet (or the peer's signal) says the copy is done, like
//    nvshmem_put_nbi. put_inline needs direct stores and fails with ERROR_UNSUPPORTED_TRANSPORT. The _warp and
//    _block forms push one trigger from lane/thread 0 after a barrier and return its status to every thread.
//    quiet() pushes a FLUSH to every proxy peer: call it from one thread (after a barrier), not from all of them.
//    The back end is out of line but in the kernel's call graph, and a kernel gets the registers of its most
//    demanding callee: where occupancy matters, bound the kernel with __launch_bounds__ (see gda4j_put_bandwidth).
#pragma once
#include <stdint.h>
#include "layout/view.cuh"
#include "core/memory_model.cuh"
#include "core/errors.cuh"
#include "core/copy.cuh"
#include "core/handles.cuh"
#include "transport/proxy.cuh"
#include "layout/inline_slot.cuh"

namespace gda4j {

// The Peer fields an out-of-line back end needs, as separate arguments (see "indirect back ends" below).
#define GDA4J_PEER_PARAMS const DeviceView *peer_view, uint64_t peer_handle, uint64_t peer_heap_size, int peer_rank, \
                          uint32_t peer_transport
#define GDA4J_PEER_NAMES peer_view, peer_handle, peer_heap_size, peer_rank, peer_transport
#define GDA4J_PEER_FIELDS(p) (p).view, (p).handle, (p).heap_size, (p).rank, (p).transport

namespace detail {
// The Peer an indirect back end works on: everything but the direct heap pointers, which it does not use.
__device__ __forceinline__ Peer unpack(const DeviceView* v, uint64_t handle, uint64_t heap_size, int rank,
                                       uint32_t transport) {
  Peer p;
  p.view = v;
  p.heap = nullptr;
  p.local_heap = reinterpret_cast<const char*>(v->heap_base);
  p.heap_size = heap_size;
  p.handle = handle;
  p.transport = transport;
  p.rank = rank;
  return p;
}
}  // namespace detail

static_assert(SIGNAL_SET == proxy::TriggerFifoDescriptor::SIGNAL_OP_SET &&
                  SIGNAL_ADD == proxy::TriggerFifoDescriptor::SIGNAL_OP_ADD,
              "signal ops travel in proxy triggers unchanged");

namespace detail {

// A peer no back end serves (NONE: out of range or unconnected; or a transport this API does not drive yet).
__device__ inline __noinline__ int fail_peer(GDA4J_PEER_PARAMS, uint32_t op, uint64_t offset) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  if (p.transport == TRANSPORT_NONE) {
    return fail(p.view, ERR_PEER, ERROR_BAD_PEER, op, p.rank, offset, 0, (uint64_t)p.view->nranks);
  }
  return fail(p.view, ERR_TRANSPORT, ERROR_UNSUPPORTED_TRANSPORT, op, p.rank, offset, TRANSPORT_P2P, p.transport);
}

__device__ __forceinline__ int check_put(const Peer& p, uint32_t op, uint64_t dst, uint64_t src, uint64_t bytes) {
  int st = check_range(p.view, p.heap_size, op, p.rank, dst, bytes);
  if (st == OK) st = check_range(p.view, p.heap_size, op, -1, src, bytes);
  return st;
}

}  // namespace detail
}  // namespace gda4j

#include "transport/ibgda.cuh"  // the TRANSPORT_IBGDA branch of the indirect back ends below (detail::ibgda_*)

namespace gda4j {
namespace detail {

// ---- one path for the atomics on a word (NVSHMEM's rule). A NIC's atomic is a read and a write across PCIe, not
// atomic with GPU atomics on the same word, so the words of a rank with IBGDA links (which its IBGDA peers add to)
// take ADDs only through a NIC: the rank's own through its loopback QP, and a GPU ADD from a p2p or proxy peer is
// refused (ERROR_MIXED_ATOMICS). The host marks such entries with PEER_NIC_ATOMICS (io.gda4j.world.AtomicRouting).

// An ADD to an entry with flag bits: refused over a p2p link without native atomics (red.add.sys is then a read and a
// write) or to a rank whose words get NIC atomics, unless it is this rank's own (then posted on its loopback QP).
__device__ inline __noinline__ int check_flagged_add(GDA4J_PEER_PARAMS, uint32_t op, uint64_t sig) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  if ((p.handle & P2P_NO_NATIVE_ATOMICS) != 0) {
    return fail(p.view, ERR_TRANSPORT, ERROR_NO_NATIVE_ATOMICS, op, p.rank, sig, SIGNAL_ADD, 0);
  }
  if (p.transport != TRANSPORT_SELF) {
    return fail(p.view, ERR_TRANSPORT, ERROR_MIXED_ATOMICS, op, p.rank, sig, SIGNAL_ADD, p.transport);
  }
  if (!GDA4J_IBGDA_ENABLED) {  // built without the IBGDA branch: this rank's own ADDs have no NIC to go through
    return fail(p.view, ERR_TRANSPORT, ERROR_UNSUPPORTED_TRANSPORT, op, p.rank, sig, TRANSPORT_IBGDA, p.transport);
  }
  return check_word(p.view, p.heap_size, op, p.rank, sig);
}

// A direct peer's word; an ADD to an entry with flag bits is checked out of line (check_flagged_add).
__device__ __forceinline__ int check_signal(const Peer& p, uint32_t op, uint64_t sig, uint32_t sig_op) {
  if (__builtin_expect(sig_op == SIGNAL_ADD && (p.handle & PEER_HANDLE_FLAGS) != 0, 0)) {
    return check_flagged_add(GDA4J_PEER_FIELDS(p), op, sig);
  }
  return check_word(p.view, p.heap_size, op, p.rank, sig);
}

// After check_signal: an ADD that must go through this rank's loopback QP (only the SELF entry passes the check with
// PEER_NIC_ATOMICS set).
__device__ __forceinline__ bool add_via_nic(const Peer& p, uint32_t sig_op) {
  return __builtin_expect(sig_op == SIGNAL_ADD && (p.handle & PEER_NIC_ATOMICS) != 0, 0);
}

__device__ __forceinline__ ibgda::DeviceQp* loopback_qp(uint64_t handle) {
  return reinterpret_cast<ibgda::DeviceQp*>(handle & ~PEER_HANDLE_FLAGS);
}

// This rank's own ADD as an ATOMIC_FA on its loopback QP, posted by one thread of the scope after a barrier (so the
// scope's earlier stores are ordered before it, as a release); relaxed otherwise, complete at flush(self) or quiet.
__device__ inline __noinline__ int add_via_loopback(GDA4J_PEER_PARAMS, uint32_t op, uint64_t sig, uint64_t value,
                                                    uint32_t scope) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  return ibgda_scoped(scope, [&] {
    return ibgda::signal(p.view, loopback_qp(p.handle), p.rank, op, sig, SIGNAL_ADD, value);
  });
}

// flush(self) where this rank's ADDs go through its loopback QP: they are complete once it is drained.
__device__ inline __noinline__ int flush_loopback(GDA4J_PEER_PARAMS) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  return ibgda::drain(p.view, loopback_qp(p.handle), OP_FLUSH, p.rank);
}

// ---- indirect back ends, out of line: the direct path above them stays as small as it was. They take the handle's
// fields as scalars and rebuild the Peer inside: passed as a struct (by reference or by value) it would make every
// caller keep a copy in local memory or in extra registers, direct path included (ptxas: 48 -> 82 registers in the
// bandwidth kernel, halving its occupancy).

__device__ inline __noinline__ int put_indirect(GDA4J_PEER_PARAMS, uint32_t op, uint64_t dst, uint64_t src,
                                                uint64_t bytes) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  if (p.transport == TRANSPORT_PROXY) return proxy::put(p, op, dst, src, bytes);
  if (is_ibgda(p.transport)) return ibgda_put(p, op, dst, src, bytes, IBGDA_SCOPE_THREAD);
  return fail_peer(GDA4J_PEER_FIELDS(p), op, dst);
}

__device__ inline __noinline__ int put_signal_indirect(GDA4J_PEER_PARAMS, uint64_t dst, uint64_t src, uint64_t bytes,
                                                       uint64_t sig, uint32_t sig_op, uint64_t value) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  if (p.transport == TRANSPORT_PROXY) {
    if (sig_op == SIGNAL_ADD && (p.handle & PEER_NIC_ATOMICS) != 0) {
      return fail(p.view, ERR_TRANSPORT, ERROR_MIXED_ATOMICS, OP_PUT_SIGNAL, p.rank, sig, SIGNAL_ADD, p.transport);
    }
    return proxy::put_signal(p, dst, src, bytes, sig, sig_op, value);
  }
  if (is_ibgda(p.transport)) return ibgda_put_signal(p, dst, src, bytes, sig, sig_op, value, IBGDA_SCOPE_THREAD);
  return fail_peer(GDA4J_PEER_FIELDS(p), OP_PUT_SIGNAL, dst);
}

__device__ inline __noinline__ int signal_indirect(GDA4J_PEER_PARAMS, uint32_t op, uint64_t sig, uint32_t sig_op,
                                                   uint64_t value) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  if (p.transport == TRANSPORT_PROXY) {
    // The proxy adds with a GPU atomic (a kernel on its stream): refused where the target's words get NIC atomics.
    if (sig_op == SIGNAL_ADD && (p.handle & PEER_NIC_ATOMICS) != 0) {
      return fail(p.view, ERR_TRANSPORT, ERROR_MIXED_ATOMICS, op, p.rank, sig, SIGNAL_ADD, p.transport);
    }
    return proxy::signal(p, op, sig, sig_op, value);
  }
  if (is_ibgda(p.transport)) return ibgda_signal(p, op, sig, sig_op, value);
  return fail_peer(GDA4J_PEER_FIELDS(p), op, sig);
}

__device__ inline __noinline__ int fence_indirect(GDA4J_PEER_PARAMS) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  // The proxy executes a channel's triggers in order on one stream. An RC QP keeps its WQEs in posting order, and
  // a WQE posted while an earlier READ (get) is outstanding carries the fence bit (ibgda.cuh, "Fence"), so it cannot
  // read its source before the READ's data has landed: later operations already wait for earlier ones.
  if (p.transport == TRANSPORT_PROXY || is_ibgda(p.transport)) return OK;
  return fail_peer(GDA4J_PEER_FIELDS(p), OP_FENCE, 0);
}

__device__ inline __noinline__ int flush_indirect(GDA4J_PEER_PARAMS) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  if (p.transport == TRANSPORT_PROXY) return proxy::flush(p, OP_FLUSH);
  // Draining every IBGDA QP (and the PCIe flush where configured) covers this peer's.
  if (is_ibgda(p.transport)) return ibgda_quiet_all(p.view);
  return fail_peer(GDA4J_PEER_FIELDS(p), OP_FLUSH, 0);
}

// put_inline needs the peer's memory under this GPU's stores, or a NIC that writes the 16-byte slot in one piece
// (IBGDA: an inline WRITE); the proxy cannot keep the slot's promise.
__device__ inline __noinline__ int put_inline_indirect(GDA4J_PEER_PARAMS, uint64_t slot, uint64_t value, uint32_t seq) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  if (is_ibgda(p.transport)) return ibgda_put_inline(p, slot, value, seq);
  return fail_peer(GDA4J_PEER_FIELDS(p), OP_PUT_INLINE, slot);
}

// Lane 0 of the warp pushes for the warp (after the warp's stores, which its release covers) and every lane gets
// its status. All 32 lanes call.
__device__ inline __noinline__ int put_indirect_warp(GDA4J_PEER_PARAMS, uint32_t op, uint64_t dst, uint64_t src,
                                                     uint64_t bytes) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  __syncwarp();
  int st = OK;
  if (lane_id() == 0) st = put_indirect(GDA4J_PEER_FIELDS(p), op, dst, src, bytes);
  return __shfl_sync(0xffffffffu, st, 0);
}

__device__ inline __noinline__ int put_signal_indirect_warp(GDA4J_PEER_PARAMS, uint64_t dst, uint64_t src,
                                                            uint64_t bytes, uint64_t sig, uint32_t sig_op,
                                                            uint64_t value) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  __syncwarp();
  int st = OK;
  if (lane_id() == 0) st = put_signal_indirect(GDA4J_PEER_FIELDS(p), dst, src, bytes, sig, sig_op, value);
  return __shfl_sync(0xffffffffu, st, 0);
}

// Thread 0 pushes for the block after bar.sync (which orders the block's stores before its release); every thread
// gets the status. All threads of the block call.
__device__ inline __noinline__ int put_indirect_block(GDA4J_PEER_PARAMS, uint32_t op, uint64_t dst, uint64_t src,
                                                      uint64_t bytes) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  __shared__ int status;
  __syncthreads();
  if (block_thread_id() == 0) status = put_indirect(GDA4J_PEER_FIELDS(p), op, dst, src, bytes);
  __syncthreads();
  const int st = status;
  __syncthreads();  // `status` may be reused by the next call
  return st;
}

__device__ inline __noinline__ int put_signal_indirect_block(GDA4J_PEER_PARAMS, uint64_t dst, uint64_t src,
                                                             uint64_t bytes, uint64_t sig, uint32_t sig_op,
                                                             uint64_t value) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  __shared__ int status;
  __syncthreads();
  if (block_thread_id() == 0) {
    status = put_signal_indirect(GDA4J_PEER_FIELDS(p), dst, src, bytes, sig, sig_op, value);
  }
  __syncthreads();
  const int st = status;
  __syncthreads();
  return st;
}

__device__ __forceinline__ uint64_t* peer_word(const Peer& p, uint64_t offset) {
  return reinterpret_cast<uint64_t*>(p.heap + offset);
}

__device__ __forceinline__ void signal_relaxed(const Peer& p, uint64_t sig, uint32_t op, uint64_t value) {
  if (op == SIGNAL_ADD) {
    red_add_relaxed_sys(peer_word(p, sig), value);
  } else {
    store_relaxed_sys(peer_word(p, sig), value);
  }
}

// Release: ordered after every store the calling thread (and, after a barrier, its group) made before it.
__device__ __forceinline__ void signal_release(const Peer& p, uint64_t sig, uint32_t op, uint64_t value) {
  if (op == SIGNAL_ADD) {
    red_add_release_sys(peer_word(p, sig), value);
  } else {
    store_release_sys(peer_word(p, sig), value);
  }
}

__device__ __forceinline__ void copy(const Peer& p, uint64_t dst, uint64_t src, uint64_t bytes, uint32_t lane,
                                     uint32_t nlanes) {
  copy_cooperative(p.heap + dst, p.local_heap + src, bytes, lane, nlanes);
}

}  // namespace detail
}  // namespace gda4j


namespace gda4j {

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
    return detail::add_via_loopback(GDA4J_PEER_FIELDS(p), OP_SIGNAL, sig_offset, value, detail::IBGDA_SCOPE_THREAD);
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
    return detail::add_via_loopback(GDA4J_PEER_FIELDS(p), OP_ATOMIC_ADD, offset, value, detail::IBGDA_SCOPE_THREAD);
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
    return detail::add_via_loopback(GDA4J_PEER_FIELDS(p), OP_PUT_SIGNAL, sig_offset, value, detail::IBGDA_SCOPE_THREAD);
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
    return detail::add_via_loopback(GDA4J_PEER_FIELDS(p), OP_PUT_SIGNAL, sig_offset, value, detail::IBGDA_SCOPE_WARP);
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
    return detail::add_via_loopback(GDA4J_PEER_FIELDS(p), OP_PUT_SIGNAL, sig_offset, value, detail::IBGDA_SCOPE_BLOCK);
  }
  // bar.sync orders the block's stores before thread 0's release at system scope.
  __syncthreads();
  if (t == 0) detail::signal_release(p, sig_offset, op, value);
  return OK;
}

// ---- put_inline: up to 8 bytes carried in the peer's 16-byte slot at `slot_offset` (16-byte aligned) as two
// halves {lo32, seq} {hi32, seq} (inline_slot.cuh). `seq` must be nonzero and grow with every message to the slot
// (slots start zeroed).
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

// ---- fence / flush / quiet. For direct peers each is a system-scope fence: the stores are this thread's own, so
// ordering them is all a later store needs, and a fence after them is all completion needs. For proxy peers fence is
// free (triggers run in order) and flush/quiet push a FLUSH and wait until the proxy has completed everything before
// it. For IBGDA peers fence is free too (an RC QP keeps its WQEs in order, and a WQE after an outstanding get carries
// the mlx5 fence bit, so it waits for the READ's data) and flush/quiet drain the QPs (then a
// PCIe flush through the null MR where configured).
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
    return detail::flush_loopback(GDA4J_PEER_FIELDS(p));  // this rank's own ADDs went through its loopback QP
  }
  return OK;
}

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
      int st = proxy::push1(p, OP_QUIET, proxy::control_word0(proxy::TriggerFifoDescriptor::KIND_FLUSH), 0, &q);
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

__device__ __forceinline__ int quiet(const Local& me) {
  fence_acq_rel_sys();
  if (__builtin_expect((me.flags & VIEW_FLAG_PROXY_PEERS) != 0, 0)) {
    int st = detail::quiet_proxies(me);
    if (st != OK) return st;
  }
  if (GDA4J_IBGDA_ENABLED && __builtin_expect((me.flags & VIEW_FLAG_IBGDA) != 0, 0)) {
    return detail::ibgda_quiet_all(me.view);
  }
  return OK;
}

// ---- waits on this rank's heap. Spins give up after the view's timeout (recording ERROR_WAIT_TIMEOUT and raising
// the abort flag) or when the abort flag is raised elsewhere (ERR_ABORTED, no record).

namespace detail {
// Polls between looks at the abort word and the clock. Those looks cost more than a poll, and a poll loop with
// bookkeeping in it answers later: the polls run unrolled, the bookkeeping once per POLL_BATCH. The abort word is in
// pinned host memory, so a look is a read across PCIe: with a look every 64 polls, the hundreds of warps a MoE
// kernel keeps waiting spent half their wait on those reads, and the warps copying beside them waited ~4x longer for
// their loads (ncu). One rank's MoE combine of 4096 tokens on an H100 went from 7.6 to 0.57 ms with 1024 polls,
// still well under a millisecond between looks.
constexpr uint32_t POLL_BATCH = 1024;
constexpr uint32_t POLL_UNROLL = 8;

// Out of line, so that the poll loop around it stays small. Returns OK to keep spinning.
__device__ inline __noinline__ int spin_check(const Local& me, uint64_t* start, uint32_t op, uint64_t offset,
                                             uint64_t want, uint64_t seen, uint32_t cmp) {
  uint64_t now = global_timer_ns();
  if (*start == 0) *start = now;
  if (load_volatile(me.abort_flag) != 0) return ERR_ABORTED;
  uint64_t elapsed = now - *start;
  if (elapsed > me.timeout_ns) {
    record_error(me.view, ERROR_WAIT_TIMEOUT, op, me.rank, offset, want, seen, cmp, elapsed);
    return ERR_TIMEOUT;
  }
  return OK;
}
}  // namespace detail

// Spins until this rank's word at `sig_offset` satisfies `word <cmp> value`. An acquire: what the signaller wrote
// before a release signal (put_signal, or fence + signal) is visible after it returns OK.
__device__ __forceinline__ int wait_until(const Local& me, uint64_t sig_offset, uint32_t cmp, uint64_t value,
                                          uint64_t* seen_out = nullptr) {
  int st = check_word(me.view, me.heap_size, OP_WAIT_UNTIL, me.rank, sig_offset);
  if (st != OK) return st;
  const uint64_t* word = reinterpret_cast<const uint64_t*>(me.heap + sig_offset);
  uint64_t start = 0;
  uint64_t seen;
  for (;;) {
    for (uint32_t batch = 0; batch < detail::POLL_BATCH; batch += detail::POLL_UNROLL) {
#pragma unroll
      for (uint32_t k = 0; k < detail::POLL_UNROLL; ++k) {
        seen = load_acquire_sys(word);
        if (compare(seen, cmp, value)) {
          if (seen_out) *seen_out = seen;
          return OK;
        }
      }
    }
    st = detail::spin_check(me, &start, OP_WAIT_UNTIL, sig_offset, value, seen, cmp);
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
  uint64_t start = 0;
  uint64_t lo, hi;
  for (;;) {
    for (uint32_t batch = 0; batch < detail::POLL_BATCH; batch += detail::POLL_UNROLL) {
#pragma unroll
      for (uint32_t k = 0; k < detail::POLL_UNROLL; ++k) {
        load_slot_relaxed_sys(slot, lo, hi);
        if (InlineSlotDescriptor::is_whole_at_or_after(lo, hi, seq)) {
          *value_out = InlineSlotDescriptor::value_of(lo, hi);
          if (seq_out) *seq_out = InlineSlotDescriptor::seq_of(lo);
          return OK;
        }
      }
    }
    // The error record's `seen`: the low half's sequence, or the high half's where the low one is already there.
    const uint32_t s0 = InlineSlotDescriptor::seq_of(lo);
    st = detail::spin_check(me, &start, OP_WAIT_UNTIL, slot_offset, seq,
                            (int32_t)(s0 - seq) < 0 ? s0 : InlineSlotDescriptor::seq_of(hi), CMP_GE);
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

// gda4j/detail/dispatch.cuh: the one dispatcher between the public API (gda4j.cuh) and the transports
// (transport/*.cuh). A public call takes the direct path (transport/p2p.cuh) inline when the peer is p2p or self and
// otherwise calls an out-of-line *_indirect function here, which branches on the peer's transport to its back end.
// A new transport is one header under transport/ and one branch per call here. Kernels include gda4j.cuh, not this.
//
// Keep the include order: nvcc lays out a module's PTX functions by where they are defined, and this order (proxy,
// none, ibgda, then the functions below) is the one the committed PTX was built with (regen-ptx.sh --check).
#pragma once
#include <stdint.h>
#include "../layout/view.cuh"
#include "../core/memory_model.cuh"
#include "../core/errors.cuh"
#include "../core/copy.cuh"
#include "../core/handles.cuh"
#include "../transport/p2p.cuh"
#include "../transport/proxy.cuh"
#include "../layout/inline_slot.cuh"
#include "../transport/none.cuh"
#include "../transport/ibgda.cuh"

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

// ---- indirect back ends, out of line: the direct path (gda4j.cuh, transport/p2p.cuh) stays as small as it was.
// They take the handle's fields as scalars and rebuild the Peer inside: passed as a struct (by reference or by value)
// it would make every caller keep a copy in local memory or in extra registers, direct path included (ptxas: 48 -> 82
// registers in the bandwidth kernel, halving its occupancy).

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
  // The proxy executes a channel's triggers in order on one stream, so earlier puts are ordered already; the fence
  // is for this thread's own loads and stores, which a signal's relaxed trigger would not order (fence + signal is
  // a release on every transport: a receiver that grants ring slots back reads them first).
  if (p.transport == TRANSPORT_PROXY) {
    fence_acq_rel_sys();
    return OK;
  }
  // An RC QP keeps its WQEs in posting order, and a WQE posted while an earlier READ (get) is outstanding carries
  // the fence bit (transport/ibgda_qp.cuh, "Fence"), so it cannot read its source before the READ's data has
  // landed: on one QP later operations already wait for earlier ones; over several, the others are drained.
  if (is_ibgda(p.transport)) return ibgda_fence(p);
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
}  // namespace gda4j

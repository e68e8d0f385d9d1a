// gda4j/transport/ibgda/ibgda.cuh: the device API's IBGDA back end. detail/dispatch.cuh calls `ibgda::backend` (at
// the end) when a peer's transport is TRANSPORT_IBGDA (a branch marked unlikely, so P2P code stays as it was), and
// for this rank's own ADDs where its words take NIC atomics; qp.cuh posts the WQEs.
// Each is out of line: the P2P hot loops keep their size, and an IBGDA call is dominated by PCIe stores anyway.
// Scope: 0 = thread, 1 = warp (every lane calls with the same arguments), 2 = block (every thread does); one thread
// posts for the group after a barrier that orders the group's earlier stores before its release (cumulativity), and
// the status is shared so every thread returns the same one.
//
// Cost for kernels that never meet an IBGDA peer: one compare per call and the registers of the (cold) IBGDA code,
// which ptxas counts for the whole kernel (about 70 instead of 40-50). Kernels launched with many threads per block
// should say so with __launch_bounds__ (the toolkit's bandwidth kernel does) so ptxas keeps the count down; or build
// with -DGDA4J_IBGDA_ENABLED=0 to compile the branch out (IBGDA peers then fail with ERROR_UNSUPPORTED_TRANSPORT).
#pragma once
#include <stdint.h>
#include "../../layout/view.cuh"
#include "../../core/errors.cuh"
#include "../../core/handles.cuh"
#include "../../core/backend.cuh"
#include "qp.cuh"

#ifndef GDA4J_IBGDA_ENABLED
#define GDA4J_IBGDA_ENABLED 1
#endif

namespace gda4j {
namespace detail {

// The dispatch test (detail/dispatch.cuh): a compile-time false removes the IBGDA branch entirely.
__device__ __forceinline__ bool is_ibgda(uint32_t transport) {
  return GDA4J_IBGDA_ENABLED && __builtin_expect(transport == TRANSPORT_IBGDA, 0);
}

// An IBGDA peer's handle is its DeviceQp array (one entry per QP: GDA4J_IBGDA_QPS_PER_PEER). A Peer bound to a channel
// (with_channel) carries the chosen entry with this bit; an unbound one posts on the entry of the calling warp, so the
// warps of a grid spread over the QPs and one warp's calls stay in order on one QP.
constexpr uint64_t IBGDA_CHANNEL_BOUND = 4;

// The calling warp's index in the grid.
__device__ __forceinline__ uint32_t grid_warp() {
  const uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const uint32_t warps_per_block = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
  return block * warps_per_block + ibgda::block_thread() / 32;
}

__device__ __forceinline__ ibgda::DeviceQp* ibgda_qp(const Peer& p) {
  ibgda::DeviceQp* qp = reinterpret_cast<ibgda::DeviceQp*>(p.handle & ~IBGDA_CHANNEL_BOUND);
  return (p.handle & IBGDA_CHANNEL_BOUND) != 0 ? qp : ibgda::qp_for(qp, grid_warp());
}

// The handle of an IBGDA peer bound to channel `c`: its QP c % qp_count.
__device__ __forceinline__ uint64_t ibgda_bind(uint64_t handle, uint32_t c) {
  ibgda::DeviceQp* base = ibgda::qp_base(reinterpret_cast<ibgda::DeviceQp*>(handle & ~IBGDA_CHANNEL_BOUND));
  return reinterpret_cast<uint64_t>(ibgda::qp_for(base, c)) | IBGDA_CHANNEL_BOUND;
}

// fence(peer): free on one QP (RC order, and the fence bit behind a get); over several, the peer's other QPs are
// drained unless the Peer is bound to a channel, whose fence orders that channel's QP only.
__device__ inline __noinline__ int ibgda_fence(const Peer& p) {
  if ((p.handle & IBGDA_CHANNEL_BOUND) != 0) return OK;
  ibgda::DeviceQp* qp = ibgda_qp(p);
  if (ibgda::qp_base(qp)->qp_count <= 1) return OK;
  return ibgda::fence_qps(p.view, qp, p.rank);
}

// Runs `post` on one thread of the scope and returns its status to all of them.
template <typename Post>
__device__ __forceinline__ int ibgda_scoped(uint32_t scope, Post post) {
  if (scope == SCOPE_THREAD) return post();
  if (scope == SCOPE_WARP) {
    __syncwarp();
    int st = ibgda::lane() == 0 ? post() : OK;
    return __shfl_sync(0xffffffffu, st, 0);
  }
  __shared__ int ibgda_block_status;
  __syncthreads();
  if (ibgda::block_thread() == 0) ibgda_block_status = post();
  __syncthreads();
  int st = ibgda_block_status;
  __syncthreads();
  return st;
}

__device__ inline __noinline__ int ibgda_put(const Peer& p, uint32_t op, uint64_t dst, uint64_t src, uint64_t bytes,
                                             uint32_t scope) {
  int st = check_range(p.view, p.heap_size, op, p.rank, dst, bytes);
  if (st == OK) st = check_range(p.view, p.heap_size, op, -1, src, bytes);
  if (st != OK) return st;
  return ibgda_scoped(scope, [&] { return ibgda::put(p.view, ibgda_qp(p), p.rank, op, dst, src, bytes); });
}

__device__ inline __noinline__ int ibgda_put_signal(const Peer& p, uint64_t dst, uint64_t src, uint64_t bytes,
                                                    uint64_t sig, uint32_t sig_op, uint64_t value, uint32_t scope) {
  int st = check_range(p.view, p.heap_size, OP_PUT_SIGNAL, p.rank, dst, bytes);
  if (st == OK) st = check_range(p.view, p.heap_size, OP_PUT_SIGNAL, -1, src, bytes);
  if (st == OK) st = check_word(p.view, p.heap_size, OP_PUT_SIGNAL, p.rank, sig);
  if (st != OK) return st;
  return ibgda_scoped(scope, [&] {
    return ibgda::put_signal(p.view, ibgda_qp(p), p.rank, dst, src, bytes, sig, sig_op, value);
  });
}

// signal (op OP_SIGNAL) and atomic_add (op OP_ATOMIC_ADD, sig_op SIGNAL_ADD): one WQE from the calling thread.
__device__ inline __noinline__ int ibgda_signal(const Peer& p, uint32_t op, uint64_t sig, uint32_t sig_op,
                                                uint64_t value) {
  int st = check_word(p.view, p.heap_size, op, p.rank, sig);
  if (st != OK) return st;
  return ibgda::signal(p.view, ibgda_qp(p), p.rank, op, sig, sig_op, value);
}

__device__ inline __noinline__ int ibgda_put_inline(const Peer& p, uint64_t slot, uint64_t value, uint32_t seq) {
  int st = check_word(p.view, p.heap_size, OP_PUT_SIGNAL, p.rank, slot, 16);
  if (st != OK) return st;
  return ibgda::put_inline(p.view, ibgda_qp(p), p.rank, slot, value, seq);
}

// Every IBGDA peer's QPs and this rank's loopback QP (its own ADDs) drained, then one PCIe flush where configured and a get was published since the last one
// (the flush covers every QP of the NIC, so once is enough). Reads the view: quiet is not a hot-loop call.
__device__ inline __noinline__ int ibgda_quiet_all(const DeviceView* v) {
  const ibgda::DeviceQp* flush_via = nullptr;
  int flush_peer = -1;
  for (int r = 0; r < v->nranks && flush_via == nullptr; ++r) {
    const PeerEntry& e = v->peers[r];
    if (e.transport == TRANSPORT_IBGDA && e.handle != 0
        && ibgda::flushes_on_quiet(reinterpret_cast<const ibgda::DeviceQp*>(e.handle))) {
      flush_via = reinterpret_cast<const ibgda::DeviceQp*>(e.handle);
      flush_peer = r;
    }
  }
  // Before any drain: every get counted here is in the ready_head its QP's drain waits for.
  const uint64_t gets = flush_via != nullptr ? ibgda::gets_posted(flush_via) : 0;
  for (int r = 0; r < v->nranks; ++r) {
    const PeerEntry& e = v->peers[r];
    if (e.transport == TRANSPORT_IBGDA && e.handle != 0) {
      ibgda::DeviceQp* base = reinterpret_cast<ibgda::DeviceQp*>(e.handle);
      for (uint32_t i = 0, n = base->qp_count; i < n; ++i) {
        int st = ibgda::drain(v, base + i, OP_QUIET, r);
        if (st != OK) return st;
      }
    } else if (e.transport == TRANSPORT_SELF && (e.handle & PEER_NIC_ATOMICS) != 0) {
      // This rank's own ADDs, posted on its loopback QP (detail/dispatch.cuh, "one path for the atomics on a word").
      int st = ibgda::drain(v, reinterpret_cast<ibgda::DeviceQp*>(e.handle & ~PEER_HANDLE_FLAGS), OP_QUIET, r);
      if (st != OK) return st;
    }
  }
  return flush_via != nullptr ? ibgda::flush_after_gets(v, flush_via, flush_peer, gets) : OK;
}

__device__ __forceinline__ ibgda::DeviceQp* loopback_qp(uint64_t handle) {
  return reinterpret_cast<ibgda::DeviceQp*>(handle & ~PEER_HANDLE_FLAGS);
}

}  // namespace detail

namespace ibgda {

// IBGDA's calls as the dispatcher makes them (core/backend.cuh). A rank with IBGDA links takes its own ADDs through
// its loopback QP: the world puts that QP in its SELF entry, with PEER_NIC_ATOMICS (io.gda4j.world.AtomicRouting).
struct backend : gda4j::detail::Offers {
  static constexpr bool INDIRECT = true;
  static constexpr bool PUT_INLINE = true;
  static constexpr bool GET = true;
  static constexpr bool QUIET = true;
  static constexpr bool LOOPBACK_ADDS = true;
  static constexpr bool CHANNELS = true;
  static constexpr bool ENABLED = GDA4J_IBGDA_ENABLED;

  __device__ static __forceinline__ bool serves(uint32_t transport) { return gda4j::detail::is_ibgda(transport); }

  __device__ static __forceinline__ int put(const Peer& p, uint32_t op, uint64_t dst, uint64_t src, uint64_t bytes) {
    return gda4j::detail::ibgda_put(p, op, dst, src, bytes, gda4j::detail::SCOPE_THREAD);
  }

  __device__ static __forceinline__ int put_signal(const Peer& p, uint64_t dst, uint64_t src, uint64_t bytes,
                                                   uint64_t sig, uint32_t sig_op, uint64_t value) {
    return gda4j::detail::ibgda_put_signal(p, dst, src, bytes, sig, sig_op, value, gda4j::detail::SCOPE_THREAD);
  }

  __device__ static __forceinline__ int signal(const Peer& p, uint32_t op, uint64_t sig, uint32_t sig_op,
                                               uint64_t value) {
    return gda4j::detail::ibgda_signal(p, op, sig, sig_op, value);
  }

  // An RC QP keeps its WQEs in posting order, and a WQE posted while an earlier READ (get) is outstanding carries
  // the fence bit (qp.cuh, "Fence"), so it cannot read its source before the READ's data has landed: on one QP later
  // operations already wait for earlier ones; over several, the others are drained (ibgda_fence).
  __device__ static __forceinline__ int fence(const Peer& p) { return gda4j::detail::ibgda_fence(p); }

  // Draining every IBGDA QP (and the PCIe flush where configured) covers this peer's.
  __device__ static __forceinline__ int flush(const Peer& p) { return gda4j::detail::ibgda_quiet_all(p.view); }

  // put_inline needs a NIC that writes the 16-byte slot in one piece: an inline WRITE.
  __device__ static __forceinline__ int put_inline(const Peer& p, uint64_t slot, uint64_t value, uint32_t seq) {
    return gda4j::detail::ibgda_put_inline(p, slot, value, seq);
  }

  __device__ static __forceinline__ int get(const Peer& p, uint64_t dst, uint64_t src, uint64_t bytes) {
    int st = check_range(p.view, p.heap_size, OP_GET, p.rank, src, bytes);
    if (st == OK) st = check_range(p.view, p.heap_size, OP_GET, -1, dst, bytes);
    if (st != OK) return st;
    return ibgda::get(p.view, gda4j::detail::ibgda_qp(p), p.rank, dst, src, bytes);
  }

  // A peer reached by several QPs, bound to channel `c` (with_channel): its QP c % qp_count.
  __device__ static __forceinline__ uint64_t bind_channel(const Peer& p, uint32_t c) {
    return gda4j::detail::ibgda_bind(p.handle, c);
  }

  __device__ static __forceinline__ bool quiet_needed(uint32_t view_flags) {
    return GDA4J_IBGDA_ENABLED && __builtin_expect((view_flags & VIEW_FLAG_IBGDA) != 0, 0);
  }

  __device__ static __forceinline__ int quiet(const Local& me) { return gda4j::detail::ibgda_quiet_all(me.view); }

  // This rank's own ADD as an ATOMIC_FA on its loopback QP, posted by one thread of the scope after a barrier (so the
  // scope's earlier stores are ordered before it, as a release); relaxed otherwise, complete at flush(self) or quiet.
  __device__ static __forceinline__ int loopback_add(const Peer& p, uint32_t op, uint64_t sig, uint64_t value,
                                                     uint32_t scope) {
    return gda4j::detail::ibgda_scoped(scope, [&] {
      return ibgda::signal(p.view, gda4j::detail::loopback_qp(p.handle), p.rank, op, sig, SIGNAL_ADD, value);
    });
  }

  // flush(self) where this rank's ADDs go through its loopback QP: they are complete once it is drained.
  __device__ static __forceinline__ int flush_loopback(const Peer& p) {
    return ibgda::drain(p.view, gda4j::detail::loopback_qp(p.handle), OP_FLUSH, p.rank);
  }
};

}  // namespace ibgda
}  // namespace gda4j

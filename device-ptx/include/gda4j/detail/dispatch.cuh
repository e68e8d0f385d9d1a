// gda4j/detail/dispatch.cuh: the one dispatcher between the public API (gda4j.cuh) and the transports' back ends
// (transport/<name>/, listed in transport/backends.cuh). A public call takes the direct path (core/direct.cuh)
// inline when the peer is DIRECT and otherwise calls an out-of-line *_indirect function here, which asks the back end
// of every row of gda4j/transports.def, in the table's order, whether it serves the peer's transport
// (core/backend.cuh says what a back end offers). The dispatcher names no transport: a new one is a row in the table
// and a folder with its back end. Kernels include gda4j.cuh, not this.
#pragma once
#include <stdint.h>
#include "../layout/view.cuh"
#include "../core/memory_model.cuh"
#include "../core/errors.cuh"
#include "../core/copy.cuh"
#include "../core/handles.cuh"
#include "../core/direct.cuh"
#include "../core/backend.cuh"
#include "../core/unserved.cuh"
#include "../transport/backends.cuh"

namespace gda4j {
namespace detail {

// ---- the back ends, in the table's order (a leading Offers, which offers nothing, takes the first comma).
template <class... B>
struct Backends {};
using TableBackends = Backends<Offers
#define GDA4J_TRANSPORT(NAME, name, code, phrase, capabilities, view_flag) , ::gda4j::name::backend
#include "../transports.def"
#undef GDA4J_TRANSPORT
                               >;

// The table and the back ends agree: a row has PUT_INLINE exactly when it is DIRECT or its back end offers it.
#define GDA4J_TRANSPORT(NAME, name, code, phrase, capabilities, view_flag)                                          \
  static_assert((((capabilities) & CAP_DIRECT) != 0 || ::gda4j::name::backend::PUT_INLINE) ==                       \
                    (((capabilities) & CAP_PUT_INLINE) != 0),                                                       \
                "transports.def: " #name "'s PUT_INLINE capability and its back end's put_inline disagree");
#include "../transports.def"
#undef GDA4J_TRANSPORT

// The calls a back end may offer the dispatcher: each names the flag of core/backend.cuh that says whether B offers it
// (OFFERED<B>) and forwards to B's function of that name, which is named only for a B that offers it.
#define GDA4J_BACKEND_CALL(Name, flag, function)                                                                   \
  struct Name {                                                                                                    \
    template <class B>                                                                                             \
    static constexpr bool OFFERED = B::flag;                                                                       \
    template <class B, class... A>                                                                                 \
    __device__ static __forceinline__ auto call(const Peer& p, A... a) {                                           \
      return B::function(p, a...);                                                                                 \
    }                                                                                                              \
  };
GDA4J_BACKEND_CALL(Put, INDIRECT, put)
GDA4J_BACKEND_CALL(PutSignal, INDIRECT, put_signal)
GDA4J_BACKEND_CALL(Signal, INDIRECT, signal)
GDA4J_BACKEND_CALL(Fence, INDIRECT, fence)
GDA4J_BACKEND_CALL(Flush, INDIRECT, flush)
GDA4J_BACKEND_CALL(PutInline, PUT_INLINE, put_inline)
GDA4J_BACKEND_CALL(Get, GET, get)
GDA4J_BACKEND_CALL(BindChannel, CHANNELS, bind_channel)
#undef GDA4J_BACKEND_CALL

// One back end's part of a call: true, with its result in *out, when B offers the call and serves the peer.
template <class Call, class B, class R, class... A>
__device__ __forceinline__ bool by(const Peer& p, R* out, A... a) {
  if constexpr (Call::template OFFERED<B>) {
    if (B::serves(p.transport)) {
      *out = Call::template call<B>(p, a...);
      return true;
    }
  }
  return false;
}

// Whether a back end, asked in the table's order, offers the call and serves the peer; *out is then its result.
template <class Call, class... B, class R, class... A>
__device__ __forceinline__ bool first_serving(Backends<B...>, const Peer& p, R* out, A... a) {
  return (by<Call, B>(p, out, a...) || ...);
}

// The call by the back end that serves the peer, else the peer's failure (fail_peer) naming `op` and `addr`.
template <class Call, class... A>
__device__ __forceinline__ int served(const Peer& p, uint32_t op, uint64_t addr, A... a) {
  int st = OK;
  if (first_serving<Call>(TableBackends{}, p, &st, a...)) return st;
  return fail_peer(GDA4J_PEER_FIELDS(p), op, addr);
}

// Stops quiet() at the first back end whose part fails.
template <class B>
__device__ __forceinline__ bool quiet_fails_by(const Local& me, int* st) {
  if constexpr (B::QUIET) {
    if (B::quiet_needed(me.flags)) {
      *st = B::quiet(me);
      return *st != OK;
    }
  }
  return false;
}

template <class B>
__device__ __forceinline__ bool refuse_add_by(const Peer& p, uint32_t op, uint64_t sig, int* st) {
  if constexpr (B::REFUSES_FLAGGED_ADDS) {
    if (B::refuses_add(p)) {
      *st = B::refuse_add(p, op, sig);
      return true;
    }
  }
  return false;
}

template <class B>
__device__ __forceinline__ bool loopback_add_by(const Peer& p, uint32_t op, uint64_t sig, uint64_t value,
                                                uint32_t scope, int* st) {
  if constexpr (B::LOOPBACK_ADDS) {
    *st = B::loopback_add(p, op, sig, value, scope);
    return true;
  }
  return false;
}

template <class B>
__device__ __forceinline__ bool flush_loopback_by(const Peer& p, int* st) {
  if constexpr (B::LOOPBACK_ADDS) {
    *st = B::flush_loopback(p);
    return true;
  }
  return false;
}

// Whether this build has a back end for this rank's own ADDs where its words take NIC atomics.
template <class... B>
constexpr bool loopback_adds_enabled(Backends<B...>) {
  return ((B::LOOPBACK_ADDS && B::ENABLED) || ...);
}
constexpr bool LOOPBACK_ADDS_ENABLED = loopback_adds_enabled(TableBackends{});

// ---- one path for the atomics on a word (NVSHMEM's rule). A NIC's atomic is a read and a write across PCIe, not
// atomic with GPU atomics on the same word, so the words of a rank with links whose ADDs are NIC atomics take ADDs
// only through a NIC: the rank's own through the loopback object in its SELF entry, and a GPU ADD from a DIRECT peer
// is refused (ERROR_MIXED_ATOMICS). The host marks such entries with PEER_NIC_ATOMICS (io.gda4j.world.AtomicRouting).

template <class... B>
__device__ __forceinline__ int check_flagged_add_by(Backends<B...>, const Peer& p, uint32_t op, uint64_t sig) {
  int st = OK;
  if ((refuse_add_by<B>(p, op, sig, &st) || ...)) return st;
  if (p.transport != TRANSPORT_SELF) {
    return fail(p.view, ERR_TRANSPORT, ERROR_MIXED_ATOMICS, op, p.rank, sig, SIGNAL_ADD, p.transport);
  }
  if (!LOOPBACK_ADDS_ENABLED) {  // this build left out the back end that would take the rank's ADDs
    return fail(p.view, ERR_TRANSPORT, ERROR_UNSUPPORTED_TRANSPORT, op, p.rank, sig, 0, p.transport);
  }
  return check_word(p.view, p.heap_size, op, p.rank, sig);
}

// An ADD to an entry with flag bits: refused where a transport's bit says its link cannot carry it, or to a rank
// whose words get NIC atomics, unless it is this rank's own (then posted on its loopback object).
__device__ inline __noinline__ int check_flagged_add(GDA4J_PEER_PARAMS, uint32_t op, uint64_t sig) {
  return check_flagged_add_by(TableBackends{}, unpack(GDA4J_PEER_NAMES), op, sig);
}

// A direct peer's word; an ADD to an entry with flag bits is checked out of line (check_flagged_add).
__device__ __forceinline__ int check_signal(const Peer& p, uint32_t op, uint64_t sig, uint32_t sig_op) {
  if (__builtin_expect(sig_op == SIGNAL_ADD && (p.handle & PEER_HANDLE_FLAGS) != 0, 0)) {
    return check_flagged_add(GDA4J_PEER_FIELDS(p), op, sig);
  }
  return check_word(p.view, p.heap_size, op, p.rank, sig);
}

// After check_signal: an ADD that must go through this rank's loopback object (only the SELF entry passes the check
// with PEER_NIC_ATOMICS set).
__device__ __forceinline__ bool add_via_nic(const Peer& p, uint32_t sig_op) {
  return __builtin_expect(sig_op == SIGNAL_ADD && (p.handle & PEER_NIC_ATOMICS) != 0, 0);
}

template <class... B>
__device__ __forceinline__ int add_via_loopback_by(Backends<B...>, const Peer& p, uint32_t op, uint64_t sig,
                                                   uint64_t value, uint32_t scope) {
  int st = OK;
  if ((loopback_add_by<B>(p, op, sig, value, scope, &st) || ...)) return st;
  return fail_peer(GDA4J_PEER_FIELDS(p), op, sig);
}

// This rank's own ADD where its words take NIC atomics (add_via_nic), made by `scope` (SCOPE_*).
__device__ inline __noinline__ int add_via_loopback(GDA4J_PEER_PARAMS, uint32_t op, uint64_t sig, uint64_t value,
                                                    uint32_t scope) {
  return add_via_loopback_by(TableBackends{}, unpack(GDA4J_PEER_NAMES), op, sig, value, scope);
}

template <class... B>
__device__ __forceinline__ int flush_loopback_by(Backends<B...>, const Peer& p) {
  int st = OK;
  if ((flush_loopback_by<B>(p, &st) || ...)) return st;
  return fail_peer(GDA4J_PEER_FIELDS(p), OP_FLUSH, 0);
}

// flush(self) where this rank's ADDs go through its loopback object: they are complete once it is drained.
__device__ inline __noinline__ int flush_loopback(GDA4J_PEER_PARAMS) {
  return flush_loopback_by(TableBackends{}, unpack(GDA4J_PEER_NAMES));
}

// ---- indirect back ends, out of line: the direct path (gda4j.cuh, core/direct.cuh) stays as small as it was.
// They take the handle's fields as scalars and rebuild the Peer inside: passed as a struct (by reference or by value)
// it would make every caller keep a copy in local memory or in extra registers, direct path included (ptxas: 48 -> 82
// registers in the bandwidth kernel, halving its occupancy).

__device__ inline __noinline__ int put_indirect(GDA4J_PEER_PARAMS, uint32_t op, uint64_t dst, uint64_t src,
                                                uint64_t bytes) {
  return served<Put>(unpack(GDA4J_PEER_NAMES), op, dst, op, dst, src, bytes);
}

__device__ inline __noinline__ int put_signal_indirect(GDA4J_PEER_PARAMS, uint64_t dst, uint64_t src, uint64_t bytes,
                                                       uint64_t sig, uint32_t sig_op, uint64_t value) {
  return served<PutSignal>(unpack(GDA4J_PEER_NAMES), OP_PUT_SIGNAL, dst, dst, src, bytes, sig, sig_op, value);
}

__device__ inline __noinline__ int signal_indirect(GDA4J_PEER_PARAMS, uint32_t op, uint64_t sig, uint32_t sig_op,
                                                   uint64_t value) {
  return served<Signal>(unpack(GDA4J_PEER_NAMES), op, sig, op, sig, sig_op, value);
}

__device__ inline __noinline__ int fence_indirect(GDA4J_PEER_PARAMS) {
  return served<Fence>(unpack(GDA4J_PEER_NAMES), OP_FENCE, 0);
}

__device__ inline __noinline__ int flush_indirect(GDA4J_PEER_PARAMS) {
  return served<Flush>(unpack(GDA4J_PEER_NAMES), OP_FLUSH, 0);
}

// put_inline needs the peer's memory under this GPU's stores, or a back end that keeps the slot's promise.
__device__ inline __noinline__ int put_inline_indirect(GDA4J_PEER_PARAMS, uint64_t slot, uint64_t value, uint32_t seq) {
  return served<PutInline>(unpack(GDA4J_PEER_NAMES), OP_PUT_INLINE, slot, slot, value, seq);
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

// ---- calls the public API makes inline: get (which only some back ends offer) and quiet's work per transport.

// with_channel: the handle of `p` bound to channel `c` by its back end where that offers channels; else p's own
// (a peer without a link, handle 0, included).
__device__ __forceinline__ uint64_t channel_handle(const Peer& p, uint32_t c) {
  uint64_t handle = p.handle;
  if (handle != 0) first_serving<BindChannel>(TableBackends{}, p, &handle, c);
  return handle;
}

__device__ __forceinline__ int get(const Peer& p, uint64_t dst, uint64_t src, uint64_t bytes) {
  int st = OK;
  if (first_serving<Get>(TableBackends{}, p, &st, dst, src, bytes)) return st;
  return fail(p.view, ERR_TRANSPORT, ERROR_UNSUPPORTED_TRANSPORT, OP_GET, p.rank, src, 0, p.transport);
}

template <class... B>
__device__ __forceinline__ int quiet_transports_by(Backends<B...>, const Local& me) {
  int st = OK;
  if ((quiet_fails_by<B>(me, &st) || ...)) return st;
  return OK;
}

// What quiet() does for the peers of each transport whose flag the view carries (VIEW_FLAG_<NAME>).
__device__ __forceinline__ int quiet_transports(const Local& me) { return quiet_transports_by(TableBackends{}, me); }

}  // namespace detail
}  // namespace gda4j

// gda4j device API. Include this in your kernels; pass the rank's DeviceView pointer (World.deviceView()).
//
// Every call returns a status: OK (0) or a negative ERR_* code, and on failure the rank's ErrorRecord names
// the call, the peer, the heap offset and the values involved; the host turns it into an exception.
// Offsets address the symmetric heap: the same offset is valid on every rank.
//
// Scopes: `put`/`put_signal` come in thread, _warp and _block forms. In the _warp form every lane of the
// warp calls with the same arguments; in the _block form every thread of the block does, and the data is
// shared out among them. Signals and waits are issued by one thread.
//
// Ordering, per peer:
//  - put_signal: the signal is a release at system scope after the whole scope's data stores, so a peer that
//    sees the signal with wait_until (an acquire) sees the data.
//  - signal: a release too: it is ordered after every store the calling thread made before it.
//  - fence(peer): earlier puts to `peer` are ordered before later ones. quiet(): all earlier puts are complete
//    and visible system-wide.
#pragma once
#include <stdint.h>
#include "view.cuh"
#include "memory_model.cuh"
#include "errors.cuh"
#include "copy.cuh"

namespace gda4j {

namespace detail {

__device__ __forceinline__ uint32_t lane_id() {
  uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

__device__ __forceinline__ uint32_t block_thread_id() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ __forceinline__ uint32_t block_thread_count() { return blockDim.x * blockDim.y * blockDim.z; }

__device__ __forceinline__ bool direct(uint32_t transport) {
  return transport == TRANSPORT_SELF || transport == TRANSPORT_P2P;
}

// Validates a put before any byte moves; only the reporting lane writes the error record.
__device__ __forceinline__ int check_put(const DeviceView* v, uint32_t op, int peer, uint64_t dst, uint64_t src,
                                         uint64_t bytes) {
  int st = check_peer(v, op, peer);
  if (st == OK) st = check_range(v, op, peer, dst, bytes);
  if (st == OK) st = check_range(v, op, -1, src, bytes);
  if (st == OK && !direct(v->peers[peer].transport)) {
    record_error(v, ERROR_UNSUPPORTED_TRANSPORT, op, peer, dst, TRANSPORT_P2P, v->peers[peer].transport, 0, 0);
    st = ERR_TRANSPORT;
  }
  return st;
}

__device__ __forceinline__ int check_signal(const DeviceView* v, uint32_t op, int peer, uint64_t sig) {
  int st = check_peer(v, op, peer);
  if (st == OK) st = check_signal_slot(v, op, peer, sig);
  if (st == OK && !direct(v->peers[peer].transport)) {
    record_error(v, ERROR_UNSUPPORTED_TRANSPORT, op, peer, sig, TRANSPORT_P2P, v->peers[peer].transport, 0, 0);
    st = ERR_TRANSPORT;
  }
  return st;
}

__device__ __forceinline__ char* peer_ptr(const DeviceView* v, int peer, uint64_t offset) {
  return reinterpret_cast<char*>(v->peers[peer].peer_heap + offset);
}

__device__ __forceinline__ char* local_ptr(const DeviceView* v, uint64_t offset) {
  return reinterpret_cast<char*>(v->heap_base + offset);
}

// The signal store itself; arguments already checked. Release: ordered after the caller's earlier stores.
__device__ __forceinline__ void signal_unchecked(const DeviceView* v, int peer, uint64_t sig, uint32_t op,
                                                 uint64_t value) {
  uint64_t* word = reinterpret_cast<uint64_t*>(peer_ptr(v, peer, sig));
  if (op == SIGNAL_ADD) {
    red_add_release_sys(word, value);
  } else {
    store_release_sys(word, value);
  }
}

}  // namespace detail

// ---- put: copy `bytes` from this rank's heap at `src_offset` to `peer`'s heap at `dst_offset`.
// Not ordered with anything by itself: follow with fence/quiet, or use put_signal.

__device__ __forceinline__ int put(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset,
                                   uint64_t bytes) {
  int st = detail::check_put(v, OP_PUT, peer, dst_offset, src_offset, bytes);
  if (st != OK) return st;
  copy_cooperative(detail::peer_ptr(v, peer, dst_offset), detail::local_ptr(v, src_offset), bytes, 0, 1);
  return OK;
}

__device__ __forceinline__ int put_warp(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset,
                                        uint64_t bytes) {
  int st = detail::check_put(v, OP_PUT, peer, dst_offset, src_offset, bytes);
  if (st != OK) return st;
  copy_cooperative(detail::peer_ptr(v, peer, dst_offset), detail::local_ptr(v, src_offset), bytes,
                   detail::lane_id(), 32);
  return OK;
}

__device__ __forceinline__ int put_block(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset,
                                         uint64_t bytes) {
  int st = detail::check_put(v, OP_PUT, peer, dst_offset, src_offset, bytes);
  if (st != OK) return st;
  copy_cooperative(detail::peer_ptr(v, peer, dst_offset), detail::local_ptr(v, src_offset), bytes,
                   detail::block_thread_id(), detail::block_thread_count());
  return OK;
}

// ---- signal: set or add `value` to the 64-bit word at `sig_offset` on `peer` (8-byte aligned).

__device__ __forceinline__ int signal(const DeviceView* v, int peer, uint64_t sig_offset, uint32_t op,
                                      uint64_t value) {
  int st = detail::check_signal(v, OP_SIGNAL, peer, sig_offset);
  if (st != OK) return st;
  detail::signal_unchecked(v, peer, sig_offset, op, value);
  return OK;
}

// ---- atomic_add: relaxed atomic add on a peer's 64-bit word; orders nothing (use signal for release).
__device__ __forceinline__ int atomic_add(const DeviceView* v, int peer, uint64_t offset, uint64_t value) {
  int st = detail::check_signal(v, OP_ATOMIC_ADD, peer, offset);
  if (st != OK) return st;
  red_add_relaxed_sys(reinterpret_cast<uint64_t*>(detail::peer_ptr(v, peer, offset)), value);
  return OK;
}

// ---- put_signal: the data, then the signal, released after the data (the whole scope's data).

__device__ __forceinline__ int put_signal(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset,
                                          uint64_t bytes, uint64_t sig_offset, uint32_t op, uint64_t value) {
  int st = detail::check_put(v, OP_PUT_SIGNAL, peer, dst_offset, src_offset, bytes);
  if (st == OK) st = detail::check_signal(v, OP_PUT_SIGNAL, peer, sig_offset);
  if (st != OK) return st;
  copy_cooperative(detail::peer_ptr(v, peer, dst_offset), detail::local_ptr(v, src_offset), bytes, 0, 1);
  detail::signal_unchecked(v, peer, sig_offset, op, value);
  return OK;
}

__device__ __forceinline__ int put_signal_warp(const DeviceView* v, int peer, uint64_t dst_offset,
                                               uint64_t src_offset, uint64_t bytes, uint64_t sig_offset,
                                               uint32_t op, uint64_t value) {
  int st = detail::check_put(v, OP_PUT_SIGNAL, peer, dst_offset, src_offset, bytes);
  if (st == OK) st = detail::check_signal(v, OP_PUT_SIGNAL, peer, sig_offset);
  if (st != OK) return st;
  uint32_t lane = detail::lane_id();
  copy_cooperative(detail::peer_ptr(v, peer, dst_offset), detail::local_ptr(v, src_offset), bytes, lane, 32);
  // The warp barrier makes every lane's stores visible to lane 0, whose release then covers them (cumulativity).
  __syncwarp();
  if (lane == 0) detail::signal_unchecked(v, peer, sig_offset, op, value);
  return OK;
}

__device__ __forceinline__ int put_signal_block(const DeviceView* v, int peer, uint64_t dst_offset,
                                                uint64_t src_offset, uint64_t bytes, uint64_t sig_offset,
                                                uint32_t op, uint64_t value) {
  int st = detail::check_put(v, OP_PUT_SIGNAL, peer, dst_offset, src_offset, bytes);
  if (st == OK) st = detail::check_signal(v, OP_PUT_SIGNAL, peer, sig_offset);
  if (st != OK) return st;
  uint32_t t = detail::block_thread_id();
  copy_cooperative(detail::peer_ptr(v, peer, dst_offset), detail::local_ptr(v, src_offset), bytes, t,
                   detail::block_thread_count());
  // bar.sync orders the block's stores before thread 0's release at system scope.
  __syncthreads();
  if (t == 0) detail::signal_unchecked(v, peer, sig_offset, op, value);
  return OK;
}

// ---- wait_until: spin on this rank's word at `sig_offset` until `word <cmp> value` (an acquire).
// Gives up after the view's timeout (records ERROR_WAIT_TIMEOUT and raises the abort flag) or when the abort
// flag is raised elsewhere (returns ERR_ABORTED without recording). `seen_out` (may be null) gets the last value.
__device__ __forceinline__ int wait_until(const DeviceView* v, uint64_t sig_offset, uint32_t cmp, uint64_t value,
                                       uint64_t* seen_out = nullptr) {
  int st = check_signal_slot(v, OP_WAIT_UNTIL, v->rank, sig_offset);
  if (st != OK) return st;
  const uint64_t* word = reinterpret_cast<const uint64_t*>(detail::local_ptr(v, sig_offset));
  uint64_t seen = load_acquire_sys(word);
  if (compare(seen, cmp, value)) {
    if (seen_out) *seen_out = seen;
    return OK;
  }
  const uint64_t start = global_timer_ns();
  const uint64_t timeout = v->timeout_ns;
  for (uint32_t i = 1;; ++i) {
    seen = load_acquire_sys(word);
    if (compare(seen, cmp, value)) break;
    // The clock and the abort word are read only every 32 polls: they cost more than the poll itself.
    if ((i & 31) == 0) {
      if (aborted(v)) {
        if (seen_out) *seen_out = seen;
        return ERR_ABORTED;
      }
      uint64_t elapsed = global_timer_ns() - start;
      if (elapsed > timeout) {
        record_error(v, ERROR_WAIT_TIMEOUT, OP_WAIT_UNTIL, v->rank, sig_offset, value, seen, cmp, elapsed);
        if (seen_out) *seen_out = seen;
        return ERR_TIMEOUT;
      }
    }
  }
  if (seen_out) *seen_out = seen;
  return OK;
}

// One thread waits, then the whole block continues with the data it guards visible (bar.sync after acquire).
__device__ __forceinline__ int wait_until_block(const DeviceView* v, uint64_t sig_offset, uint32_t cmp,
                                                uint64_t value) {
  __shared__ int status;
  if (detail::block_thread_id() == 0) status = wait_until(v, sig_offset, cmp, value);
  __syncthreads();
  int st = status;
  __syncthreads();
  return st;
}

// ---- fence / quiet. For direct (P2P/SELF) peers both are a system-scope fence: the stores are issued by this
// thread, so ordering them is all that is needed for later stores, and completing them for `quiet`.
__device__ __forceinline__ int fence(const DeviceView* v, int peer) {
  int st = check_peer(v, OP_FENCE, peer);
  if (st != OK) return st;
  fence_acq_rel_sys();
  return OK;
}

__device__ __forceinline__ int quiet(const DeviceView* v) {
  (void)v;
  fence_acq_rel_sys();
  return OK;
}

}  // namespace gda4j

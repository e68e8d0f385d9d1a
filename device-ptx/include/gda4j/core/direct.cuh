// gda4j/core/direct.cuh: peers of a DIRECT transport (the rank itself, or a peer whose heap is mapped into this GPU):
// this GPU's own loads and stores, so a put is complete when it returns. The public calls in gda4j.cuh take this path
// inline, with the branch predicted for it; every other transport is reached out of line through detail/dispatch.cuh
// (which also routes a direct peer's ADD to a NIC where the word takes NIC atomics).
#pragma once
#include <stdint.h>
#include "../layout/view.cuh"
#include "memory_model.cuh"
#include "errors.cuh"
#include "copy.cuh"
#include "handles.cuh"

namespace gda4j {
namespace detail {

// A put's two ranges: the destination in the peer's heap, the source in this rank's.
__device__ __forceinline__ int check_put(const Peer& p, uint32_t op, uint64_t dst, uint64_t src, uint64_t bytes) {
  int st = check_range(p.view, p.heap_size, op, p.rank, dst, bytes);
  if (st == OK) st = check_range(p.view, p.heap_size, op, -1, src, bytes);
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

// Handles of the device API: this rank's side (Local) and one peer (Peer), resolved once per kernel into registers
// so that hot calls read no view memory (a view read after an acquire costs about half a microsecond over NVLink).
// Included by gda4j.cuh; the transport back ends (transport/*.cuh) take the same handles.
#pragma once
#include <stdint.h>
#include "../layout/view.cuh"

// The Peer fields an out-of-line back end needs, as separate arguments (see "indirect back ends" in
// detail/dispatch.cuh).
#define GDA4J_PEER_PARAMS const DeviceView *peer_view, uint64_t peer_handle, uint64_t peer_heap_size, int peer_rank, \
                          uint32_t peer_transport
#define GDA4J_PEER_NAMES peer_view, peer_handle, peer_heap_size, peer_rank, peer_transport
#define GDA4J_PEER_FIELDS(p) (p).view, (p).handle, (p).heap_size, (p).rank, (p).transport

namespace gda4j {

// This rank's side, resolved once (registers).
struct Local {
  const DeviceView* view;
  char* heap;
  uint64_t heap_size;
  const uint64_t* abort_flag;
  uint64_t timeout_ns;
  int rank;
  uint32_t flags;          // VIEW_FLAG_*: read with the header fields above, from the same line
};

// One peer as seen from this rank, resolved once (registers).
struct Peer {
  const DeviceView* view;
  char* heap;              // the peer's heap as this GPU addresses it (DIRECT peers)
  const char* local_heap;  // this rank's heap: the source of puts
  uint64_t heap_size;
  uint64_t handle;         // the transport's object for this peer (PeerEntry.handle)
  uint32_t transport;
  int rank;
  uint32_t caps;           // CAP_* of the transport (PeerEntry.caps)
};

__device__ __forceinline__ Local local_of(const DeviceView* v) {
  Local l;
  l.view = v;
  l.heap = reinterpret_cast<char*>(v->heap_base);
  l.heap_size = v->heap_size_bytes;
  l.abort_flag = reinterpret_cast<const uint64_t*>(v->abort_flag);
  l.timeout_ns = v->timeout_ns;
  l.rank = v->rank;
  l.flags = v->flags;
  return l;
}

// A peer out of range resolves to transport NONE; calls on it fail with ERR_PEER and a record.
__device__ __forceinline__ Peer peer_of(const DeviceView* v, int peer) {
  Peer p;
  p.view = v;
  p.local_heap = reinterpret_cast<const char*>(v->heap_base);
  p.heap_size = v->heap_size_bytes;
  p.rank = peer;
  if (peer < 0 || peer >= v->nranks) {
    p.heap = nullptr;
    p.handle = 0;
    p.transport = TRANSPORT_NONE;
    p.caps = CAPS_NONE;
  } else {
    const PeerEntry& e = v->peers[peer];
    p.heap = reinterpret_cast<char*>(e.peer_heap);
    p.handle = e.handle;
    p.transport = e.transport;
    p.caps = e.caps;
  }
  return p;
}

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

// Direct peers are reached with loads and stores; every other transport goes through an out-of-line back end.
__device__ __forceinline__ bool is_direct(const Peer& p) { return (p.caps & CAP_DIRECT) != 0; }

// Which threads a call is made by (io.gda4j.world.Scope): one, every lane of the warp, or every thread of the block.
constexpr uint32_t SCOPE_THREAD = 0;
constexpr uint32_t SCOPE_WARP = 1;
constexpr uint32_t SCOPE_BLOCK = 2;

// The Peer an indirect back end works on: everything but the direct heap pointers, which it does not use, and the
// capabilities, which it knows as its own (so the out-of-line calls take one argument fewer).
__device__ __forceinline__ Peer unpack(const DeviceView* v, uint64_t handle, uint64_t heap_size, int rank,
                                       uint32_t transport) {
  Peer p;
  p.view = v;
  p.heap = nullptr;
  p.local_heap = reinterpret_cast<const char*>(v->heap_base);
  p.heap_size = heap_size;
  p.handle = handle;
  p.transport = transport;
  p.caps = 0;
  p.rank = rank;
  return p;
}
}  // namespace detail
}  // namespace gda4j

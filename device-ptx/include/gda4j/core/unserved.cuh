// gda4j/core/unserved.cuh: the back end of last resort. A call that no back end serves fails here, out of line like
// the back ends, with a record that says why.
#pragma once
#include <stdint.h>
#include "../layout/view.cuh"
#include "errors.cuh"
#include "handles.cuh"

namespace gda4j {
namespace detail {

// A call no back end serves: to a peer of no transport (NONE: out of range or unconnected), or one the peer's
// transport does not offer (or that this build left out).
__device__ inline __noinline__ int fail_peer(GDA4J_PEER_PARAMS, uint32_t op, uint64_t offset) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  if (p.transport == TRANSPORT_NONE) {
    return fail(p.view, ERR_PEER, ERROR_BAD_PEER, op, p.rank, offset, 0, (uint64_t)p.view->nranks);
  }
  return fail(p.view, ERR_TRANSPORT, ERROR_UNSUPPORTED_TRANSPORT, op, p.rank, offset, 0, p.transport);
}

}  // namespace detail
}  // namespace gda4j

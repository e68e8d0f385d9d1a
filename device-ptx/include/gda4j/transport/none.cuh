// gda4j/transport/none.cuh: the back end of last resort. A peer no transport serves fails here, out of line like the
// other back ends, with a record that says why.
#pragma once
#include <stdint.h>
#include "../layout/view.cuh"
#include "../core/errors.cuh"
#include "../core/handles.cuh"

namespace gda4j {
namespace detail {

// A peer no back end serves (NONE: out of range or unconnected; or a transport this API does not drive yet).
__device__ inline __noinline__ int fail_peer(GDA4J_PEER_PARAMS, uint32_t op, uint64_t offset) {
  const Peer p = unpack(GDA4J_PEER_NAMES);
  if (p.transport == TRANSPORT_NONE) {
    return fail(p.view, ERR_PEER, ERROR_BAD_PEER, op, p.rank, offset, 0, (uint64_t)p.view->nranks);
  }
  return fail(p.view, ERR_TRANSPORT, ERROR_UNSUPPORTED_TRANSPORT, op, p.rank, offset, TRANSPORT_P2P, p.transport);
}

}  // namespace detail
}  // namespace gda4j

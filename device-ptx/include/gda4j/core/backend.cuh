// gda4j/core/backend.cuh: what a transport's device code offers the dispatcher (detail/dispatch.cuh). Each row of
// gda4j/transports.def with a folder transport/<name>/ has a `struct gda4j::<name>::backend` that derives from
// detail::Offers, sets the flags of what it implements and defines those calls as static functions; the dispatcher
// calls them for every row, in the table's order, through `if constexpr` on the flags, so a call a back end does not
// offer is never named. A peer's transport selects the back end with `serves(transport)`.
#pragma once
#include <stdint.h>

namespace gda4j {
namespace detail {

struct Offers {
  // The out-of-line calls on a peer that is not DIRECT: serves, put, put_signal, signal, fence and flush.
  static constexpr bool INDIRECT = false;
  // put_inline(p, slot, value, seq) to such a peer.
  static constexpr bool PUT_INLINE = false;
  // get(p, dst, src, bytes) from such a peer.
  static constexpr bool GET = false;
  // quiet_needed(view flags) and quiet(me): work quiet() does for every peer of the transport (its view_flag).
  static constexpr bool QUIET = false;
  // refuses_add(p) and refuse_add(p, op, sig): an ADD to a DIRECT peer entry that the transport marked with its bit
  // of PEER_HANDLE_FLAGS, refused before the world's rules apply.
  static constexpr bool REFUSES_FLAGGED_ADDS = false;
  // loopback_add(p, op, sig, value, scope) and flush_loopback(p): this rank's own ADDs where its words take NIC
  // atomics (PEER_NIC_ATOMICS on the SELF entry, whose handle is the transport's loopback object).
  static constexpr bool LOOPBACK_ADDS = false;
  // bind_channel(p, c): with_channel's handle for a peer the transport reaches over several paths (ibgda's QPs), so
  // that the calls of one channel take one path; a peer without a link keeps its handle.
  static constexpr bool CHANNELS = false;
  // Whether this build compiles the back end's calls in (false: its peers fail with ERROR_UNSUPPORTED_TRANSPORT).
  static constexpr bool ENABLED = true;
};

}  // namespace detail

// The world's two rows of the table have no device code of their own: a NONE peer fails every call, a SELF peer
// takes the direct path.
namespace none {
struct backend : detail::Offers {};
}  // namespace none
namespace self {
struct backend : detail::Offers {};
}  // namespace self

}  // namespace gda4j

// gda4j/transport/p2p/p2p.cuh: what p2p adds to the direct path (core/direct.cuh) that every DIRECT peer takes: a
// link without native peer atomics, and its error code (io.gda4j.p2p.P2pErrorDecoder words it). The constants are
// plain C++ for DeviceViewLayoutTest; the back end below is CUDA only.
#pragma once
#include <stdint.h>

namespace gda4j {
namespace p2p {

// PeerEntry.handle bit of a p2p peer (io.gda4j.p2p.P2pTransport.NO_NATIVE_ATOMICS): the link (PCIe without
// CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED) does not carry atomics, so red.add.sys to the peer's memory is a
// read and a write; SIGNAL_ADD and atomic_add to that peer fail with ERROR_NO_NATIVE_ATOMICS.
constexpr uint64_t NO_NATIVE_ATOMICS = 1;

}  // namespace p2p

// ErrorRecord.code: an ADD over a p2p link without native peer atomics, refused (offset = word).
constexpr uint32_t ERROR_NO_NATIVE_ATOMICS = 15;

}  // namespace gda4j

#if defined(__CUDACC__)
#include "../../layout/view.cuh"
#include "../../core/errors.cuh"
#include "../../core/handles.cuh"
#include "../../core/backend.cuh"

namespace gda4j {
namespace p2p {

static_assert((NO_NATIVE_ATOMICS & PEER_HANDLE_FLAGS) == NO_NATIVE_ATOMICS && NO_NATIVE_ATOMICS != PEER_NIC_ATOMICS,
              "p2p's handle bit is one of the flag bits the world leaves to transports");

// p2p's part of the dispatcher (core/backend.cuh): its peers are DIRECT, so it offers no indirect call.
struct backend : detail::Offers {
  static constexpr bool REFUSES_FLAGGED_ADDS = true;

  __device__ static __forceinline__ bool refuses_add(const Peer& p) { return (p.handle & NO_NATIVE_ATOMICS) != 0; }

  __device__ static __forceinline__ int refuse_add(const Peer& p, uint32_t op, uint64_t sig) {
    return fail(p.view, ERR_TRANSPORT, ERROR_NO_NATIVE_ATOMICS, op, p.rank, sig, SIGNAL_ADD, 0);
  }
};

}  // namespace p2p
}  // namespace gda4j
#endif

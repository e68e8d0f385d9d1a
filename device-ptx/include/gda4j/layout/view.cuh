// gda4j device view: the per-rank struct a kernel receives, mirrored byte for byte by
// io.gda4j.world.DeviceViewDescriptor, PeerEntryDescriptor and ErrorRecordDescriptor (same field names).
//
//  DeviceView (64 B header, then nranks PeerEntry of 64 B each, in GPU memory; built by the host once)
//   0        4        8        12       16                24                32
//   +--------+--------+--------+--------+-----------------+-----------------+
//   | magic  |version | rank   | nranks | heap_base       | heap_size_bytes |
//   +--------+--------+--------+--------+-----------------+-----------------+
//   32                40                48                56       60       64
//   +-----------------+-----------------+-----------------+--------+--------+
//   | abort_flag      | error_record    | timeout_ns      | flags  |reserved|
//   +-----------------+-----------------+-----------------+--------+--------+
//
//  PeerEntry (64 B, peers[r] at 64 + 64*r)
//   0        4        8                 16                24       28       32               40      64
//   +--------+--------+-----------------+-----------------+--------+--------+----------------+-------+
//   |transprt| rank   | peer_heap       | handle          | rkey   | lkey   | peer_abort_flag| resvd |
//   +--------+--------+-----------------+-----------------+--------+--------+----------------+-------+
//
//  ErrorRecord (64 B, in GPU memory; the first failing thread claims it with a CAS on `code`)
//   0        4        8        12       16                24                32                40
//   +--------+--------+--------+--------+-----------------+-----------------+-----------------+
//   | code   | rank   | peer   | op     | offset          | expected        | seen            |
//   +--------+--------+--------+--------+-----------------+-----------------+-----------------+
//   40                48       52       56       60       64
//   +-----------------+--------+--------+--------+--------+
//   | elapsed_ns      | block  | thread | cmp    | claimed|
//   +-----------------+--------+--------+--------+--------+
#pragma once
#include <stdint.h>

// The version of every layout a kernel shares with the host (this view, the peer entries, the transports' device
// handles). Bump it with any change to one of them: a kernel built against other headers is then refused when its
// module is loaded (io.gda4j.world.DeviceViewDescriptor.VIEW_VERSION must match; a layout test checks that it does).
#define GDA4J_VIEW_VERSION 4

namespace gda4j {

constexpr uint32_t VIEW_MAGIC = 0x34414447u;  // "GDA4" little-endian
constexpr uint32_t VIEW_VERSION = GDA4J_VIEW_VERSION;

// An empty kernel whose (mangled) name carries VIEW_VERSION, instantiated in every module that includes these headers:
// the host finds "gda4j_view_versionILj<N>E" among the module's entries (PTX) or symbols (cubin) and refuses a module
// built against another version. A template instantiation links like an inline function, so -rdc builds of several
// files that include the headers link without duplicate symbols. It is never launched.
#if defined(__CUDACC__)
template <uint32_t V>
__global__ void gda4j_view_version() {}
template __global__ void gda4j_view_version<VIEW_VERSION>();
#endif

// Transport tags of a peer entry (io.gda4j.transport.TransportTag).
constexpr uint32_t TRANSPORT_NONE = 0;
constexpr uint32_t TRANSPORT_SELF = 1;
constexpr uint32_t TRANSPORT_P2P = 2;
constexpr uint32_t TRANSPORT_IBGDA = 3;
constexpr uint32_t TRANSPORT_PROXY = 4;
// PeerEntry.handle of a P2P peer (io.gda4j.p2p.P2pTransport.NO_NATIVE_ATOMICS): the link (PCIe without
// CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED) does not carry atomics, so red.add.sys to the peer's memory is a
// read and a write; SIGNAL_ADD and atomic_add to that peer fail with ERROR_NO_NATIVE_ATOMICS.
constexpr uint64_t P2P_NO_NATIVE_ATOMICS = 1;
// PeerEntry.handle bit (io.gda4j.world.AtomicRouting.PEER_NIC_ATOMICS): the peer's words receive NIC atomics (it has
// IBGDA links), and NIC atomics are not atomic with GPU atomics on the same word, so every ADD to it must go through a
// NIC: on the SELF entry the rest of the handle (handle & ~PEER_HANDLE_FLAGS) is this rank's loopback DeviceQp, on
// which its own SIGNAL_ADD / atomic_add are posted as ATOMIC_FA; on a P2P or PROXY entry (a GPU atomic) an ADD fails
// with ERROR_MIXED_ATOMICS. SET signals are plain writes and go the usual way.
constexpr uint64_t PEER_NIC_ATOMICS = 2;
// The flag bits of PeerEntry.handle; the rest is an address (DeviceQp, ProxyChannel: aligned) or 0.
constexpr uint64_t PEER_HANDLE_FLAGS = 3;

// DeviceView.flags (io.gda4j.world.DeviceViewDescriptor.FLAG_*).
constexpr uint32_t VIEW_FLAG_IBGDA = 2u;  // some peer is reached over IBGDA: quiet() drains its QPs

// Status codes returned by every device API call (0 = done). Negative, like Agrona's hot-path codes.
constexpr int OK = 0;
constexpr int ERR_TIMEOUT = -1;
constexpr int ERR_ABORTED = -2;
constexpr int ERR_RANGE = -3;
constexpr int ERR_PEER = -4;
constexpr int ERR_TRANSPORT = -5;
constexpr int ERR_ALIGNMENT = -6;

// ErrorRecord.code (io.gda4j.world.ErrorRecordDescriptor.Code).
constexpr uint32_t ERROR_NONE = 0;
constexpr uint32_t ERROR_WAIT_TIMEOUT = 1;
constexpr uint32_t ERROR_OUT_OF_RANGE = 2;
constexpr uint32_t ERROR_BAD_PEER = 3;
constexpr uint32_t ERROR_UNSUPPORTED_TRANSPORT = 4;
constexpr uint32_t ERROR_MISALIGNED = 5;
constexpr uint32_t ERROR_PROXY_FIFO_FULL = 6;      // no room in a proxy FIFO in time: the proxy is not popping
constexpr uint32_t ERROR_PROXY_FLUSH_TIMEOUT = 7;  // a flush was not completed by the proxy before the timeout
constexpr uint32_t ERROR_PROXY_STOPPED = 8;        // the proxy serving the channel is stopped or failed
constexpr uint32_t ERROR_TRIGGER_FIELD = 9;        // a field does not fit a proxy trigger (gda4j/proxy_fifo.cuh)
// IBGDA (gda4j/ibgda.cuh): for all three, offset = WQE counter, cmp = QP number.
constexpr uint32_t ERROR_CQE = 10;           // an error CQE: expected = WQE opcode, seen = syndrome | vendor << 8 | cqe opcode << 16
constexpr uint32_t ERROR_SQ_FULL = 11;       // no free send queue slot in time: expected = completions needed, seen = completed
constexpr uint32_t ERROR_POST_TIMEOUT = 12;  // posting or quiet stalled: expected = counter waited for, seen = counter reached
constexpr uint32_t ERROR_INLINE_TOO_LARGE = 13;  // an inline payload above the QP's max_inline: expected = bytes, seen = max_inline
constexpr uint32_t ERROR_SET_SIGNAL_RELAXED = 14;  // a SET signal over a NIC with relaxed ordering: cmp = QP number
constexpr uint32_t ERROR_NO_NATIVE_ATOMICS = 15;   // an ADD over a p2p link without native peer atomics: offset = word
constexpr uint32_t ERROR_MIXED_ATOMICS = 16;  // a GPU ADD (p2p, proxy) to a rank whose words get NIC atomics: offset = word
constexpr uint32_t ERROR_COMBINE_INPUT_MIXED = 17;  // MoE: ranks disagree on combining from the heap: expected / seen = entry words

// ErrorRecord.op: which device API call failed (io.gda4j.world.ErrorRecordDescriptor.Op).
constexpr uint32_t OP_NONE = 0;
constexpr uint32_t OP_PUT = 1;
constexpr uint32_t OP_PUT_SIGNAL = 2;
constexpr uint32_t OP_SIGNAL = 3;
constexpr uint32_t OP_WAIT_UNTIL = 4;
constexpr uint32_t OP_FENCE = 5;
constexpr uint32_t OP_QUIET = 6;
constexpr uint32_t OP_ATOMIC_ADD = 7;
constexpr uint32_t OP_PUT_INLINE = 8;
constexpr uint32_t OP_FLUSH = 9;
constexpr uint32_t OP_GET = 10;

// DeviceView.flags (io.gda4j.world.DeviceViewDescriptor).
// Some peer is reached through the host proxy: quiet() must also flush those channels. A flag in the header, read
// with the fields local_of() already loads, so a world without proxy peers pays nothing for it.
constexpr uint32_t VIEW_FLAG_PROXY_PEERS = 1u;

// Signal operations and wait comparisons (io.gda4j.world.SignalOp, io.gda4j.world.Cmp).
constexpr uint32_t SIGNAL_SET = 0;
constexpr uint32_t SIGNAL_ADD = 1;
constexpr uint32_t CMP_EQ = 0;
constexpr uint32_t CMP_NE = 1;
constexpr uint32_t CMP_GT = 2;
constexpr uint32_t CMP_GE = 3;
constexpr uint32_t CMP_LT = 4;
constexpr uint32_t CMP_LE = 5;

struct ErrorRecord {
  uint32_t code;
  int32_t rank;
  int32_t peer;
  uint32_t op;
  uint64_t offset;
  uint64_t expected;
  uint64_t seen;
  uint64_t elapsed_ns;
  uint32_t block;
  uint32_t thread;
  uint32_t cmp;
  uint32_t claimed;
};

struct PeerEntry {
  uint32_t transport;
  int32_t rank;
  uint64_t peer_heap;        // P2P/SELF: the peer's heap base as this GPU addresses it
  uint64_t handle;           // IBGDA: device QP; PROXY: the ProxyChannel (gda4j/proxy_fifo.cuh) in GPU memory;
                             // SELF: the loopback DeviceQp; with flag bits PEER_HANDLE_FLAGS (P2P_NO_NATIVE_ATOMICS,
                             // PEER_NIC_ATOMICS)
  uint32_t rkey;
  uint32_t lkey;
  uint64_t peer_abort_flag;  // P2P/SELF: the peer's abort word, so a failing rank stops its peers' spins
  uint64_t reserved[3];
};

struct DeviceView {
  uint32_t magic;
  uint32_t version;
  int32_t rank;
  int32_t nranks;
  uint64_t heap_base;
  uint64_t heap_size_bytes;
  uint64_t abort_flag;       // this rank's 64-bit abort word (pinned host memory mapped into every GPU); nonzero = stop
  uint64_t error_record;     // address of this rank's ErrorRecord (GPU memory)
  uint64_t timeout_ns;       // every device-side spin gives up after this long
  uint32_t flags;            // VIEW_FLAG_*
  uint32_t reserved;
  PeerEntry peers[1];        // nranks entries follow the header
};

static_assert(sizeof(ErrorRecord) == 64, "ErrorRecord is 64 bytes");
static_assert(sizeof(PeerEntry) == 64, "PeerEntry is 64 bytes");
static_assert(__builtin_offsetof(DeviceView, peers) == 64, "DeviceView header is 64 bytes");
static_assert(__builtin_offsetof(DeviceView, timeout_ns) == 48, "DeviceView.timeout_ns at 48");
static_assert(__builtin_offsetof(PeerEntry, peer_abort_flag) == 32, "PeerEntry.peer_abort_flag at 32");
static_assert(__builtin_offsetof(ErrorRecord, elapsed_ns) == 40, "ErrorRecord.elapsed_ns at 40");

}  // namespace gda4j

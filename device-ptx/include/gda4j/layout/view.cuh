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
//   0        4        8                 16                24       28       32               40       44      64
//   +--------+--------+-----------------+-----------------+--------+--------+----------------+--------+-------+
//   |transprt| rank   | peer_heap       | handle          | rkey   | lkey   | peer_abort_flag| caps   | resvd |
//   +--------+--------+-----------------+-----------------+--------+--------+----------------+--------+-------+
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
#define GDA4J_VIEW_VERSION 5

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

// The transports of a peer entry and what generic code may ask of them, from the table (gda4j/transports.def):
// TRANSPORT_<NAME> (PeerEntry.transport), CAP_<NAME> (bits of PeerEntry.caps), CAPS_<NAME> (a transport's bits) and
// VIEW_FLAG_<NAME> (DeviceView.flags), the values of io.gda4j.transport.Transport and Capability.
#define GDA4J_CAPABILITY(NAME, bit) constexpr uint32_t CAP_##NAME = 1u << (bit);
#define GDA4J_TRANSPORT(NAME, name, code, phrase, capabilities, view_flag) \
  constexpr uint32_t TRANSPORT_##NAME = (code);                             \
  constexpr uint32_t CAPS_##NAME = (capabilities);                          \
  constexpr uint32_t VIEW_FLAG_##NAME = (view_flag);
#include "../transports.def"
#undef GDA4J_CAPABILITY
#undef GDA4J_TRANSPORT

// How many codes the table has, and that no two rows share one (PeerEntry.transport selects exactly one row).
constexpr uint32_t TRANSPORT_COUNT = 0
#define GDA4J_TRANSPORT(NAME, name, code, phrase, capabilities, view_flag) +1
#include "../transports.def"
#undef GDA4J_TRANSPORT
    ;
constexpr uint32_t transport_code_rows(uint32_t code) {
  return 0
#define GDA4J_TRANSPORT(NAME, name, row_code, phrase, capabilities, view_flag) +((row_code) == code ? 1u : 0u)
#include "../transports.def"
#undef GDA4J_TRANSPORT
      ;
}
#define GDA4J_TRANSPORT(NAME, name, code, phrase, capabilities, view_flag) \
  static_assert(transport_code_rows(code) == 1, "transports.def: two rows share the code of " #name);
#include "../transports.def"
#undef GDA4J_TRANSPORT
#define GDA4J_TRANSPORT(NAME, name, code, phrase, capabilities, view_flag)                          \
  static_assert(((capabilities) & CAP_PREFERS_FEW_PUTS) == 0 || ((capabilities) & CAP_DIRECT) == 0, \
                "transports.def: " #name " is DIRECT, so its puts are stores, not host calls");
#include "../transports.def"
#undef GDA4J_TRANSPORT
static_assert(TRANSPORT_COUNT >= 2 && TRANSPORT_NONE == 0 && TRANSPORT_SELF == 1,
              "transports.def: none (0) and self (1) are the world's rows");

// PeerEntry.handle bit (io.gda4j.world.AtomicRouting.PEER_NIC_ATOMICS): the peer's words receive NIC atomics (it has
// links whose ADDs are NIC atomics), and NIC atomics are not atomic with GPU atomics on the same word, so every ADD to
// it must go through a NIC: on the SELF entry the rest of the handle (handle & ~PEER_HANDLE_FLAGS) is the loopback
// object of the transport that carries this rank's own ADDs; on an entry of a GPU_ATOMICS transport an ADD fails with
// ERROR_MIXED_ATOMICS. SET signals are plain writes and go the usual way.
constexpr uint64_t PEER_NIC_ATOMICS = 2;
// The flag bits of PeerEntry.handle, PEER_NIC_ATOMICS and bit 0, which a transport may give a meaning of its own; the
// rest is an address (a transport's aligned object) or 0.
constexpr uint64_t PEER_HANDLE_FLAGS = 3;

// Status codes returned by every device API call (0 = done). Negative, like Agrona's hot-path codes.
constexpr int OK = 0;
constexpr int ERR_TIMEOUT = -1;
constexpr int ERR_ABORTED = -2;
constexpr int ERR_RANGE = -3;
constexpr int ERR_PEER = -4;
constexpr int ERR_TRANSPORT = -5;
constexpr int ERR_ALIGNMENT = -6;

// ErrorRecord.code (io.gda4j.world.ErrorRecordDescriptor.Code): the world's codes. A transport (in its folder) and
// the MoE (moe/) define their own codes beside their code and word them through a decoder they register
// (io.gda4j.world.DeviceErrorDecoder); every code is defined once.
constexpr uint32_t ERROR_NONE = 0;
constexpr uint32_t ERROR_WAIT_TIMEOUT = 1;
constexpr uint32_t ERROR_OUT_OF_RANGE = 2;
constexpr uint32_t ERROR_BAD_PEER = 3;
constexpr uint32_t ERROR_UNSUPPORTED_TRANSPORT = 4;  // no back end of the peer's transport serves the call: seen = it
constexpr uint32_t ERROR_MISALIGNED = 5;
constexpr uint32_t ERROR_MIXED_ATOMICS = 16;  // a GPU ADD to a rank whose words get NIC atomics: offset = word,
                                              // cmp = the adding entry's transport

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
  uint32_t transport;        // TRANSPORT_*: which back end a call to this peer goes to
  int32_t rank;
  uint64_t peer_heap;        // a DIRECT peer's heap base as this GPU addresses it
  uint64_t handle;           // the transport's object for this peer (its layout in the transport's folder), with
                             // flag bits PEER_HANDLE_FLAGS
  uint32_t rkey;
  uint32_t lkey;
  uint64_t peer_abort_flag;  // the peer's abort word where it is mapped here, so a failing rank stops its peers' spins
  uint32_t caps;             // CAP_* of the transport: what kernels ask (is_direct, sets_land_in_order, ...)
  uint32_t reserved0;
  uint64_t reserved[2];
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
static_assert(__builtin_offsetof(PeerEntry, caps) == 40, "PeerEntry.caps at 40");
static_assert(__builtin_offsetof(ErrorRecord, elapsed_ns) == 40, "ErrorRecord.elapsed_ns at 40");

}  // namespace gda4j

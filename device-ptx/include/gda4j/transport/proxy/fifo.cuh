// gda4j/transport/proxy/fifo.cuh: the trigger FIFO between a GPU and its host proxy (MSCCL++ PortChannel style),
// mirrored name for name by io.gda4j.proxy.TriggerFifoDescriptor, and the proxy's device error codes
// (io.gda4j.proxy.ProxyErrorDecoder). Plain C++ (constants, structs, encoders): the device code that pushes is in
// proxy.cuh beside it, and TriggerFifoLayoutTest builds this header with g++ to check every constant and every
// encoded word against the Java side.
//
// Memory (per channel = one ordered pair "rank -> peer"):
//
//  FIFO region, pinned host memory mapped into the GPU (the proxy thread polls it from its cache)
//   0                  64                 128                128 + 16 * capacity
//   +------------------+------------------+------------------------------------+
//   | tail  | (pad)    | state | (pad)    | ring: capacity slots of 16 bytes   |
//   +------------------+------------------+------------------------------------+
//   tail:  triggers popped so far. Host putLongRelease after handling; the GPU ld.acquire.sys only when the ring
//          looks full (and in the FIFO round-trip benchmark).
//   state: STATE_RUNNING (0), STATE_STOPPED, STATE_FAILED. Host putLongRelease; the GPU reads it in slow paths.
//
//  ProxyChannel, GPU memory (PeerEntry.handle points here; written once by the host except head/tail_cache/done)
//   0        8        16       20       24       28       32           64      128          192      256
//   +--------+--------+--------+--------+--------+--------+------------+-------+------------+--------+
//   | ring   |control |capacity|cap_log2| rank   | peer   | reserved   | head  | tail_cache | done   |
//   +--------+--------+--------+--------+--------+--------+------------+-------+------------+--------+
//   head:       next position to claim (atomicAdd by pushing GPU threads).
//   tail_cache: largest tail a GPU thread has read (red.release.gpu.max), so most pushes never read host memory.
//   done:       position + 1 of the latest completed FLUSH, written by the proxy's CUDA stream after the work
//               before it (cuStreamWriteValue64): the GPU polls its own memory, the host never waits.
//
// One trigger = one 16-byte slot {word0, word1} (two slots for PUT_SIGNAL: the put, then a SIGNAL slot).
// Bit 63 of BOTH words is the lap bit of the slot's position p: 1 on even laps (p >> cap_log2 even), 0 on odd ones.
// A slot is fresh when both words carry the lap bit its position expects: the host never zeroes a slot, and a
// half-written slot is never taken (the GPU writes both halves with one 16-byte store, but the memory model only
// promises 8-byte units, so each half says for itself).
//
//  PUT, PUT_SIGNAL (first slot)
//   word0: 63 lap | 62..60 kind | 59..38 size[21:0]  | 37..0 dst_offset
//   word1: 63 lap | 62..58 zero | 57..56 dst_memory  | 55..54 src_memory | 53..38 size[37:22] | 37..0 src_offset
//  SIGNAL, ATOMIC_ADD (and PUT_SIGNAL's second slot, kind SIGNAL)
//   word0: 63 lap | 62..60 kind | 59 op (0 set, 1 add) | 58 value[63] | 57..56 dst_memory | 55..38 zero
//          | 37..0 word_offset (8-byte aligned)
//   word1: 63 lap | 62..0 value[62:0]
//  FLUSH, NOP
//   word0: 63 lap | 62..60 kind | 59..0 zero
//   word1: 63 lap | 62..0 cookie (NOP: free for the pusher, e.g. a sequence number; FLUSH: zero)
//
// Offsets address the symmetric heap (memory id MEMORY_HEAP, the only one defined; ids 1..3 are reserved for
// registered memories) and, like sizes, must be below 2^38 (256 GiB). The semaphores of a PortChannel are 64-bit
// signal words in the heap, named by their offset: SIGNAL sets or adds, the peer's wait_until acquires.
#pragma once
#include <stdint.h>

#if defined(__CUDACC__)
#define GDA4J_PROXY_FN __host__ __device__ __forceinline__
#else
#define GDA4J_PROXY_FN inline
#endif

namespace gda4j {

// ErrorRecord.code of the proxy's failures (io.gda4j.proxy.ProxyErrorDecoder words them).
constexpr uint32_t ERROR_PROXY_FIFO_FULL = 6;      // no room in a proxy FIFO in time: the proxy is not popping
constexpr uint32_t ERROR_PROXY_FLUSH_TIMEOUT = 7;  // a flush was not completed by the proxy before the timeout
constexpr uint32_t ERROR_PROXY_STOPPED = 8;        // the proxy serving the channel is stopped or failed
constexpr uint32_t ERROR_TRIGGER_FIELD = 9;        // a field does not fit a proxy trigger (offset = the field's word)

namespace proxy {

// ---- io.gda4j.proxy.TriggerFifoDescriptor ----------------------------------------------------------------------
namespace TriggerFifoDescriptor {
constexpr uint32_t KIND_NOP = 0;
constexpr uint32_t KIND_PUT = 1;
constexpr uint32_t KIND_SIGNAL = 2;
constexpr uint32_t KIND_PUT_SIGNAL = 3;
constexpr uint32_t KIND_ATOMIC_ADD = 4;
constexpr uint32_t KIND_FLUSH = 5;

constexpr uint32_t SIGNAL_OP_SET = 0;
constexpr uint32_t SIGNAL_OP_ADD = 1;
constexpr uint32_t MEMORY_HEAP = 0;

constexpr uint32_t TRIGGER_BYTES = 16;
constexpr uint32_t WORD0_OFFSET = 0;
constexpr uint32_t WORD1_OFFSET = 8;

constexpr uint32_t LAP_SHIFT = 63;
constexpr uint32_t KIND_SHIFT = 60;
constexpr uint32_t KIND_BITS = 3;
constexpr uint32_t OFFSET_BITS = 38;
constexpr uint32_t SIZE_BITS = 38;
constexpr uint32_t SIZE_LOW_SHIFT = 38;
constexpr uint32_t SIZE_LOW_BITS = 22;
constexpr uint32_t SIZE_HIGH_SHIFT = 38;
constexpr uint32_t SIZE_HIGH_BITS = 16;
constexpr uint32_t MEMORY_ID_BITS = 2;
constexpr uint32_t SRC_MEMORY_SHIFT = 54;
constexpr uint32_t DST_MEMORY_SHIFT = 56;
constexpr uint32_t SIGNAL_OP_SHIFT = 59;
constexpr uint32_t VALUE_TOP_SHIFT = 58;
constexpr uint32_t SIGNAL_MEMORY_SHIFT = 56;
constexpr uint32_t PAYLOAD_BITS = 63;

constexpr uint64_t LAP_MASK = 1ull << LAP_SHIFT;
constexpr uint64_t OFFSET_MASK = (1ull << OFFSET_BITS) - 1;
constexpr uint64_t PAYLOAD_MASK = (1ull << PAYLOAD_BITS) - 1;

constexpr uint32_t CONTROL_TAIL_OFFSET = 0;
constexpr uint32_t CONTROL_STATE_OFFSET = 64;
constexpr uint32_t RING_OFFSET = 128;
constexpr uint32_t STATE_RUNNING = 0;
constexpr uint32_t STATE_STOPPED = 1;
constexpr uint32_t STATE_FAILED = 2;

constexpr uint32_t CHANNEL_RING_OFFSET = 0;
constexpr uint32_t CHANNEL_CONTROL_OFFSET = 8;
constexpr uint32_t CHANNEL_CAPACITY_OFFSET = 16;
constexpr uint32_t CHANNEL_CAPACITY_LOG2_OFFSET = 20;
constexpr uint32_t CHANNEL_RANK_OFFSET = 24;
constexpr uint32_t CHANNEL_PEER_OFFSET = 28;
constexpr uint32_t CHANNEL_HEAD_OFFSET = 64;
constexpr uint32_t CHANNEL_TAIL_CACHE_OFFSET = 128;
constexpr uint32_t CHANNEL_DONE_OFFSET = 192;
constexpr uint32_t CHANNEL_LENGTH = 256;

constexpr uint32_t MIN_CAPACITY = 2;
constexpr uint32_t MAX_CAPACITY = 1u << 20;
}  // namespace TriggerFifoDescriptor

// The host control block at the start of the FIFO region (pinned host memory).
struct ProxyControl {
  uint64_t tail;
  uint64_t pad0[7];
  uint64_t state;
  uint64_t pad1[7];
};

// The device-side channel object (GPU memory); PeerEntry.handle holds its address.
struct ProxyChannel {
  uint64_t ring;           // device address of slot 0
  uint64_t control;        // device address of the ProxyControl
  uint32_t capacity;       // slots, a power of two
  uint32_t capacity_log2;
  int32_t rank;
  int32_t peer;
  uint64_t reserved[4];
  uint64_t head;
  uint64_t pad0[7];
  uint64_t tail_cache;
  uint64_t pad1[7];
  uint64_t done;
  uint64_t pad2[7];
};

static_assert(sizeof(ProxyControl) == TriggerFifoDescriptor::RING_OFFSET, "the ring follows the control block");
static_assert(__builtin_offsetof(ProxyControl, state) == TriggerFifoDescriptor::CONTROL_STATE_OFFSET, "state");
static_assert(sizeof(ProxyChannel) == TriggerFifoDescriptor::CHANNEL_LENGTH, "ProxyChannel is 256 bytes");
static_assert(__builtin_offsetof(ProxyChannel, head) == TriggerFifoDescriptor::CHANNEL_HEAD_OFFSET, "head");
static_assert(__builtin_offsetof(ProxyChannel, tail_cache) == TriggerFifoDescriptor::CHANNEL_TAIL_CACHE_OFFSET,
              "tail_cache");
static_assert(__builtin_offsetof(ProxyChannel, done) == TriggerFifoDescriptor::CHANNEL_DONE_OFFSET, "done");

// ---- encoders: the words without their lap bits (publish ORs lap_bits in). Check *_fits first: a field that does
// not fit would spill into its neighbours.

GDA4J_PROXY_FN bool put_fits(uint64_t dst_offset, uint64_t src_offset, uint64_t size_bytes, uint32_t dst_memory,
                             uint32_t src_memory) {
  using namespace TriggerFifoDescriptor;
  return ((dst_offset | src_offset) >> OFFSET_BITS) == 0 && (size_bytes >> SIZE_BITS) == 0 &&
         ((dst_memory | src_memory) >> MEMORY_ID_BITS) == 0;
}

GDA4J_PROXY_FN uint64_t put_word0(uint32_t kind, uint64_t dst_offset, uint64_t size_bytes) {
  using namespace TriggerFifoDescriptor;
  return (uint64_t)kind << KIND_SHIFT | (size_bytes & ((1ull << SIZE_LOW_BITS) - 1)) << SIZE_LOW_SHIFT | dst_offset;
}

GDA4J_PROXY_FN uint64_t put_word1(uint64_t src_offset, uint64_t size_bytes, uint32_t dst_memory,
                                  uint32_t src_memory) {
  using namespace TriggerFifoDescriptor;
  return (uint64_t)dst_memory << DST_MEMORY_SHIFT | (uint64_t)src_memory << SRC_MEMORY_SHIFT |
         (size_bytes >> SIZE_LOW_BITS) << SIZE_HIGH_SHIFT | src_offset;
}

GDA4J_PROXY_FN bool signal_fits(uint64_t word_offset, uint32_t signal_op, uint32_t dst_memory) {
  using namespace TriggerFifoDescriptor;
  return (word_offset >> OFFSET_BITS) == 0 && (word_offset & 7) == 0 && signal_op <= SIGNAL_OP_ADD &&
         (dst_memory >> MEMORY_ID_BITS) == 0;
}

GDA4J_PROXY_FN uint64_t signal_word0(uint32_t kind, uint32_t signal_op, uint64_t word_offset, uint64_t value,
                                     uint32_t dst_memory) {
  using namespace TriggerFifoDescriptor;
  return (uint64_t)kind << KIND_SHIFT | (uint64_t)signal_op << SIGNAL_OP_SHIFT | (value >> 63) << VALUE_TOP_SHIFT |
         (uint64_t)dst_memory << SIGNAL_MEMORY_SHIFT | word_offset;
}

GDA4J_PROXY_FN uint64_t signal_word1(uint64_t value) { return value & TriggerFifoDescriptor::PAYLOAD_MASK; }

GDA4J_PROXY_FN uint64_t control_word0(uint32_t kind) {
  return (uint64_t)kind << TriggerFifoDescriptor::KIND_SHIFT;
}

GDA4J_PROXY_FN uint64_t nop_word1(uint64_t cookie) { return cookie & TriggerFifoDescriptor::PAYLOAD_MASK; }

// The lap bit that position's slot carries in both words: 1 on even laps, so the zeroed ring reads as stale.
GDA4J_PROXY_FN uint64_t lap_bits(uint64_t position, uint32_t capacity_log2) {
  return (~(position >> capacity_log2) & 1ull) << TriggerFifoDescriptor::LAP_SHIFT;
}

// Byte offset of position's slot from the start of the ring.
GDA4J_PROXY_FN uint64_t slot_offset(uint64_t position, uint32_t capacity) {
  return (position & (uint64_t)(capacity - 1)) * TriggerFifoDescriptor::TRIGGER_BYTES;
}

}  // namespace proxy
}  // namespace gda4j

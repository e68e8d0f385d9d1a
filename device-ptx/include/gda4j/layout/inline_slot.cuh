// gda4j/layout/inline_slot.cuh: the 16-byte inline slot of put_inline / wait_inline, mirrored by
// io.gda4j.world.InlineSlotDescriptor (same names, same values).
//
//   0                 8                 16
//   +--------+--------+--------+--------+
//   | lo32   | seq    | hi32   | seq    |
//   +--------+--------+--------+--------+
//   half 0 (u64)      half 1 (u64)
//
// Each half is one 64-bit element, {data in the low 32 bits, seq in the high 32}: the device stores and loads the
// slot as v2.u64, whose elements are each single-copy atomic under the PTX memory model (a v4.u32 access is four
// 32-bit accesses, and nothing would keep a half whole). A NIC (an inline RDMA WRITE) or the emulated NIC (two 8-byte
// stores) writes the halves in any order and at any time, and a sender may overwrite the slot before the reader
// looked: a reader accepts the slot only when BOTH halves carry the SAME sequence, at or after the one it waits for.
// Halves of two messages (low half of n+1, high half of n) carry different sequences and are never returned.
// Plain C++ (no CUDA builtins), so g++ can print it for the layout tests.
#pragma once
#include <stdint.h>

#if defined(__CUDACC__)
#define GDA4J_SLOT_FN __host__ __device__ __forceinline__
#else
#define GDA4J_SLOT_FN inline
#endif

namespace gda4j {
namespace InlineSlotDescriptor {
constexpr uint32_t SIZE = 16;
constexpr uint32_t ALIGNMENT = 16;
constexpr uint32_t HALF_SIZE = 8;
constexpr uint32_t LO_HALF_OFFSET = 0;
constexpr uint32_t HI_HALF_OFFSET = 8;
constexpr uint32_t SEQ_SHIFT = 32;

// A half as one 64-bit element: data in the low 32 bits, seq in the high 32.
GDA4J_SLOT_FN uint64_t half(uint32_t data, uint32_t seq) { return (uint64_t)seq << SEQ_SHIFT | data; }
GDA4J_SLOT_FN uint32_t data_of(uint64_t half) { return (uint32_t)half; }
GDA4J_SLOT_FN uint32_t seq_of(uint64_t half) { return (uint32_t)(half >> SEQ_SHIFT); }

// The halves carry one message with sequence `seq` or a later one (wrap-safe): the rule wait_inline applies.
GDA4J_SLOT_FN bool is_whole_at_or_after(uint64_t lo_half, uint64_t hi_half, uint32_t seq) {
  return seq_of(lo_half) == seq_of(hi_half) && (int32_t)(seq_of(lo_half) - seq) >= 0;
}

GDA4J_SLOT_FN uint64_t value_of(uint64_t lo_half, uint64_t hi_half) {
  return (uint64_t)data_of(hi_half) << 32 | data_of(lo_half);
}
}  // namespace InlineSlotDescriptor
}  // namespace gda4j

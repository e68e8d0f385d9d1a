// gda4j/moe/params_header.cuh: the 32 bytes both MoE parameter blocks begin with, the high-throughput MoeParams
// (params.cuh) and the low-latency LlParams (ll_params.cuh): which block it is, the world, and the shape. Mirrored by
// io.gda4j.moe.core.MoeParamsHeaderDescriptor, which also writes it for both buffers; each block's layout test checks it
// against its own struct. Plain C++, so g++ can print it.
//
//       0  u32  magic  (MoeParamsDescriptor::PARAMS_MAGIC or MoeLowLatencyParamsDescriptor::PARAMS_MAGIC: a kernel
//                       given the other block refuses to run)
//       4  i32  nranks
//       8  i32  rank
//      12  i32  hidden
//      16  i32  dtype  (DTYPE_*: the dispatched element type)
//      20  i32  top_k
//      24  i32  num_experts
//      28  i32  num_local_experts
//      32  (length)
#pragma once
#include <stdint.h>
#include <stddef.h>

namespace gda4j {
// ErrorRecord.code: MoE ranks disagree on combining from the heap (expected / seen = entry words).
constexpr uint32_t ERROR_COMBINE_INPUT_MIXED = 17;
namespace moe {

struct MoeParamsHeader {
  uint32_t magic;
  int32_t nranks;
  int32_t rank;
  int32_t hidden;
  int32_t dtype;
  int32_t top_k;
  int32_t num_experts;
  int32_t num_local_experts;
};

namespace MoeParamsHeaderDescriptor {
constexpr uint32_t MAGIC_OFFSET = 0;
constexpr uint32_t NRANKS_OFFSET = 4;
constexpr uint32_t RANK_OFFSET = 8;
constexpr uint32_t HIDDEN_OFFSET = 12;
constexpr uint32_t DTYPE_OFFSET = 16;
constexpr uint32_t TOP_K_OFFSET = 20;
constexpr uint32_t NUM_EXPERTS_OFFSET = 24;
constexpr uint32_t NUM_LOCAL_EXPERTS_OFFSET = 28;
constexpr uint32_t LENGTH = 32;
}  // namespace MoeParamsHeaderDescriptor

static_assert(offsetof(MoeParamsHeader, magic) == MoeParamsHeaderDescriptor::MAGIC_OFFSET, "magic");
static_assert(offsetof(MoeParamsHeader, nranks) == MoeParamsHeaderDescriptor::NRANKS_OFFSET, "nranks");
static_assert(offsetof(MoeParamsHeader, rank) == MoeParamsHeaderDescriptor::RANK_OFFSET, "rank");
static_assert(offsetof(MoeParamsHeader, hidden) == MoeParamsHeaderDescriptor::HIDDEN_OFFSET, "hidden");
static_assert(offsetof(MoeParamsHeader, dtype) == MoeParamsHeaderDescriptor::DTYPE_OFFSET, "dtype");
static_assert(offsetof(MoeParamsHeader, top_k) == MoeParamsHeaderDescriptor::TOP_K_OFFSET, "top_k");
static_assert(offsetof(MoeParamsHeader, num_experts) == MoeParamsHeaderDescriptor::NUM_EXPERTS_OFFSET, "num_experts");
static_assert(offsetof(MoeParamsHeader, num_local_experts) == MoeParamsHeaderDescriptor::NUM_LOCAL_EXPERTS_OFFSET,
              "num_local_experts");
static_assert(sizeof(MoeParamsHeader) == MoeParamsHeaderDescriptor::LENGTH, "MoeParamsHeader length");

// Element types (io.gda4j.moe.tensor.ElementType codes), the values of `dtype`.
constexpr int32_t DTYPE_BF16 = 0;
constexpr int32_t DTYPE_FP8_E4M3 = 1;

}  // namespace moe
}  // namespace gda4j

// gda4j/moe/moe.cuh: what every MoE kernel (kernels/moe_*.cu) does with rows: 16-byte and 4-byte warp copies,
// BF16 to FP32 and back, and the most ranks the kernels' shared arrays hold. The protocols build on it:
// gda4j/moe/ht.cuh (high throughput: ring.cuh, direct.cuh) and gda4j/moe/ll.cuh (low latency).
#pragma once
#include <stdint.h>
#include "../gda4j.cuh"

namespace gda4j {
namespace moe {

// The most ranks (io.gda4j.moe.MoeConfig.MAX_RANKS): shared arrays of the kernels hold one entry per rank.
constexpr int MAX_RANKS = 16;

// Warp copy of `bytes` (a multiple of 16, both ends 16-byte aligned) as 16-byte vectors.
// Each lane loads a batch of vectors before it stores any: one vector at a time made a row copy a chain of memory
// round trips (a 14 KiB row: 28 per lane), since the compiler may not move a load above a store that might alias it.
// The last, partial batch goes the same way (predicated), not one vector at a time. BATCH vectors a lane: 14 moves a
// 14 KiB row (hidden 7168, BF16) in two round trips instead of four, for 56 registers.
template <int BATCH = 8>
__device__ __forceinline__ void warp_copy16(void* dst, const void* src, uint64_t bytes, uint32_t lane) {
  int4* d = reinterpret_cast<int4*>(dst);
  const int4* s = reinterpret_cast<const int4*>(src);
  const uint64_t n = bytes / 16;
  for (uint64_t i = lane; i < n; i += 32 * BATCH) {
    int4 v[BATCH];
#pragma unroll
    for (int j = 0; j < BATCH; ++j) {
      if (i + 32 * j < n) v[j] = s[i + 32 * j];
    }
#pragma unroll
    for (int j = 0; j < BATCH; ++j) {
      if (i + 32 * j < n) d[i + 32 * j] = v[j];
    }
  }
}

// Warp copy of `words` 4-byte words.
__device__ __forceinline__ void warp_copy4(void* dst, const void* src, uint64_t words, uint32_t lane) {
  uint32_t* d = reinterpret_cast<uint32_t*>(dst);
  const uint32_t* s = reinterpret_cast<const uint32_t*>(src);
  for (uint64_t i = lane; i < words; i += 32) d[i] = s[i];
}

__device__ __forceinline__ float bf16_to_float(uint16_t b) { return __uint_as_float((uint32_t)b << 16); }

// Round to nearest even, NaN to 0x7fff: io.gda4j.moe.tensor.Bf16.fromFloat.
__device__ __forceinline__ uint16_t float_to_bf16(float f) {
  uint16_t r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
}

// Eight FP32 sums rounded to BF16 (float_to_bf16) and packed in order into one 16-byte vector: a lane's share of a
// combined row.
__device__ __forceinline__ uint4 pack_bf16x8(const float (&acc)[8]) {
  uint4 o;
  o.x = float_to_bf16(acc[0]) | (uint32_t)float_to_bf16(acc[1]) << 16;
  o.y = float_to_bf16(acc[2]) | (uint32_t)float_to_bf16(acc[3]) << 16;
  o.z = float_to_bf16(acc[4]) | (uint32_t)float_to_bf16(acc[5]) << 16;
  o.w = float_to_bf16(acc[6]) | (uint32_t)float_to_bf16(acc[7]) << 16;
  return o;
}

}  // namespace moe
}  // namespace gda4j

// What a training framework does around NCCL's all-to-all-v for MoE, as Megatron's all-to-all token dispatcher does
// it (io.gda4j.samples.moe.MoeFrameworkNcclBaseline, the benchmark's "framework MoE over NCCL" column): count the
// (token, expert) pairs per expert, permute the tokens into one row per (token, expert) sorted by expert, regroup the
// received chunks by local expert and back, and sum each token's returned rows weighted by its routing weights.
// Plain CUDA: no world, no peer, no wait; NCCL moves the rows between the ranks.
//   nvcc -std=c++17 -arch=sm_90 -ptx samples/kernels/moe_framework.cu -o moe_framework.ptx
#include <stdint.h>

namespace framework {

// Copies one row of `bytes` with a warp: 16-byte vectors where both ends allow it, else 4-byte words.
__device__ __forceinline__ void warp_copy_row(char* dst, const char* src, uint64_t bytes, unsigned lane) {
  if (bytes % 16 == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0) {
    const int4* s = reinterpret_cast<const int4*>(src);
    int4* d = reinterpret_cast<int4*>(dst);
    for (uint64_t i = lane; i < bytes / 16; i += 32) d[i] = s[i];
  } else {
    const int32_t* s = reinterpret_cast<const int32_t*>(src);
    int32_t* d = reinterpret_cast<int32_t*>(dst);
    for (uint64_t i = lane; i < bytes / 4; i += 32) d[i] = s[i];
  }
}

__device__ __forceinline__ float bf16_to_float(uint16_t b) { return __uint_as_float((uint32_t)b << 16); }

__device__ __forceinline__ uint16_t float_to_bf16(float f) {
  uint16_t r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
}

}  // namespace framework

// Zeroes n 32-bit words.
extern "C" __global__ void fw_zero(int32_t* p, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = 0;
}

// Per expert, the (token, slot) pairs of this rank's top-k (`pairs` = tokens x top_k INT64 entries, -1 = none) that
// name it: the counts the framework all-gathers. counts[experts] zeroed before.
extern "C" __global__ void fw_count(const int64_t* topk, int pairs, int experts, int32_t* counts) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += gridDim.x * blockDim.x) {
    const int64_t e = topk[i];
    if (e >= 0 && e < experts) atomicAdd(counts + e, 1);
  }
}

// The permutation: map[i] = the row of pair i in the expert-sorted order (-1 for no expert): after the rows of every
// lower expert, in the order the pairs claim a place (the framework's sort is stable; which order the pairs of one
// expert take changes no byte count and no sum, since the sums go through the same map). cursor[experts] zeroed
// before. Each block sums the counts itself (experts are few), so no second kernel runs between them.
extern "C" __global__ void fw_map(const int64_t* topk, int pairs, int experts, const int32_t* counts,
                                  int32_t* cursor, int32_t* map) {
  extern __shared__ int32_t first[];
  if (threadIdx.x == 0) {
    int32_t sum = 0;
    for (int e = 0; e < experts; ++e) {
      first[e] = sum;
      sum += counts[e];
    }
  }
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += gridDim.x * blockDim.x) {
    const int64_t e = topk[i];
    map[i] = e >= 0 && e < experts ? first[e] + atomicAdd(cursor + e, 1) : -1;
  }
}

// The permute: row map[i] of `out` is token i / top_k's row of `x` (rows of row_bytes). A warp per pair.
extern "C" __global__ void fw_gather(const char* x, const int32_t* map, int pairs, int top_k, uint64_t row_bytes,
                                     char* out) {
  const unsigned lane = threadIdx.x & 31;
  const int warps = (int)(gridDim.x * blockDim.x / 32);
  for (int i = (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32); i < pairs; i += warps) {
    const int32_t at = map[i];
    if (at >= 0) framework::warp_copy_row(out + (uint64_t)at * row_bytes, x + (uint64_t)(i / top_k) * row_bytes,
                                          row_bytes, lane);
  }
}

// The received rows regrouped: NCCL delivers them by source rank, each source's rows by local expert (chunk
// (s, e) = gathered[s][me * local + e] rows); the experts want them by local expert, then source. to_expert != 0
// moves [source][expert] -> [expert][source], 0 the way back (the combine's first step). A block per chunk.
extern "C" __global__ void fw_sort_chunks(const char* in, char* out, const int32_t* gathered, int nranks, int me,
                                          int local, int experts, uint64_t row_bytes, int to_expert) {
  const int chunk = blockIdx.x;
  if (chunk >= nranks * local) return;
  const int s = chunk / local, e = chunk % local;
  // Where the chunk starts in the source-major order and in the expert-major one.
  int64_t by_source = 0, by_expert = 0;
  for (int s2 = 0; s2 < nranks; ++s2) {
    for (int e2 = 0; e2 < local; ++e2) {
      const int32_t rows = gathered[s2 * experts + me * local + e2];
      if (s2 < s || (s2 == s && e2 < e)) by_source += rows;
      if (e2 < e || (e2 == e && s2 < s)) by_expert += rows;
    }
  }
  const int32_t rows = gathered[s * experts + me * local + e];
  const int64_t from = to_expert ? by_source : by_expert;
  const int64_t to = to_expert ? by_expert : by_source;
  const unsigned lane = threadIdx.x & 31;
  const int warps = (int)(blockDim.x / 32);
  for (int r = (int)(threadIdx.x / 32); r < rows; r += warps) {
    framework::warp_copy_row(out + (uint64_t)(to + r) * row_bytes, in + (uint64_t)(from + r) * row_bytes, row_bytes,
                             lane);
  }
}

// The unpermute: each token's sum over its top-k slots of weight x returned row (BF16 rows of hidden, at map[pair]
// of `rows`), one fused multiply-add per slot in FP32 in slot order from +0.0, rounded once to BF16. A warp per token; hidden a multiple of 8.
extern "C" __global__ void fw_unpermute(const uint16_t* rows, const int32_t* map, const float* weights, int tokens,
                                        int top_k, int hidden, uint16_t* out) {
  const unsigned lane = threadIdx.x & 31;
  const int warps = (int)(gridDim.x * blockDim.x / 32);
  for (int t = (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32); t < tokens; t += warps) {
    for (int h0 = 0; h0 < hidden; h0 += 256) {
      const int h = h0 + (int)lane * 8;
      if (h >= hidden) continue;
      float acc[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[j] = 0.0f;
      for (int k = 0; k < top_k; ++k) {
        const int32_t at = map[(int64_t)t * top_k + k];
        if (at < 0) continue;
        const float w = weights[(int64_t)t * top_k + k];
        const uint4 v = *reinterpret_cast<const uint4*>(rows + (uint64_t)at * hidden + h);
        const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          acc[2 * j] = __fmaf_rn(w, framework::bf16_to_float((uint16_t)(words[j] & 0xffff)), acc[2 * j]);
          acc[2 * j + 1] = __fmaf_rn(w, framework::bf16_to_float((uint16_t)(words[j] >> 16)), acc[2 * j + 1]);
        }
      }
      uint4 o;
      o.x = framework::float_to_bf16(acc[0]) | (uint32_t)framework::float_to_bf16(acc[1]) << 16;
      o.y = framework::float_to_bf16(acc[2]) | (uint32_t)framework::float_to_bf16(acc[3]) << 16;
      o.z = framework::float_to_bf16(acc[4]) | (uint32_t)framework::float_to_bf16(acc[5]) << 16;
      o.w = framework::float_to_bf16(acc[6]) | (uint32_t)framework::float_to_bf16(acc[7]) << 16;
      *reinterpret_cast<uint4*>(out + (uint64_t)t * hidden + h) = o;
    }
  }
}

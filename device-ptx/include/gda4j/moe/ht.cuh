// gda4j/moe/ht.cuh: what the high-throughput MoE kernels share in every world (kernels/moe_layout.cu,
// moe_ring.cu, moe_direct.cu): channel ranges and the signal words of the parameter block (params.cuh).
// io.gda4j.moe.ht's package docs describe the protocols; HighThroughputSizing the memory.
#pragma once
#include <stdint.h>
#include "moe.cuh"
#include "params.cuh"

namespace gda4j {
namespace moe {

// The most channels (io.gda4j.moe.MoeConfig.MAX_CHANNELS): the direct dispatch keeps every channel's first row at
// every rank in shared memory. Two blocks a channel, one per SM, so no GPU of today has room for more.
constexpr int MAX_CHANNELS = 128;

__device__ __forceinline__ int tokens_per_channel(int num_tokens, int channels) {
  return (num_tokens + channels - 1) / channels;
}
__device__ __forceinline__ int channel_start(int num_tokens, int channels, int c) {
  return min(c * tokens_per_channel(num_tokens, channels), num_tokens);
}
__device__ __forceinline__ int channel_end(int num_tokens, int channels, int c) {
  return min((c + 1) * tokens_per_channel(num_tokens, channels), num_tokens);
}

__device__ __forceinline__ SignalIndex signal_index(const MoeParams* p) {
  return SignalIndex{p->num_channels, p->head.nranks};
}

__device__ __forceinline__ uint64_t signal_offset(const MoeParams* p, int word) { return p->signals + 8ull * word; }

}  // namespace moe
}  // namespace gda4j

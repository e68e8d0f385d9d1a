// gda4j/moe/direct.cuh: what the direct worlds' kernels (kernels/moe_direct.cu) share beyond ht.cuh, where every pair
// of ranks is p2p or self (MoeBuffer decides once, for every process): the dispatch's work counters and the layout
// exchange's index. kernels/moe_direct.cu's opening comment has the protocol: the layout exchange, the two regions of
// the received tensors, the once-per-rank completion, and the copy-engine form.
#pragma once
#include <stdint.h>
#include "ht.cuh"

namespace gda4j {
namespace moe {

// A direct world keeps no ring positions, so the first two channel state words (the area holds at least four) are
// the direct dispatch's work counter, by the call's parity. Each call counts its units of work on its parity's word
// and zeroes the other one for its next call, which in stream order starts after this one: the word this call leaves
// behind is next used by the call after next, which the next call will have zeroed.
__device__ __forceinline__ unsigned long long* dispatch_claims(const MoeParams* p, uint64_t seq) {
  unsigned long long* words = reinterpret_cast<unsigned long long*>(p->state);
  if (blockIdx.x == 0 && threadIdx.x == 0) words[(seq + 1) & 1] = 0;
  return words + (seq & 1);
}

__device__ __forceinline__ ExchangeIndex exchange_index(const MoeParams* p) {
  return ExchangeIndex{p->num_channels, p->head.nranks, p->head.num_local_experts};
}

}  // namespace moe
}  // namespace gda4j

// gda4j/moe/direct.cuh: the protocol of direct worlds (kernels/moe_direct.cu), where every pair of ranks is p2p or
// self (MoeBuffer decides once, for every process).
// No rings: a dispatch row is stored straight into its place in the destination's received tensors (in the heap,
// at params.direct_recv), and a combine row straight into the source's landing rows (params.combine_landing,
// [expert rank][token]), so each row crosses NVLink once and is copied by no receiver. What a ring's credits did
// (a sender may not overwrite what the receiver still reads) is done once per call by an entry word:
//   dispatch: every rank SETs its per-destination row counts (seq << 32 | rows) at every rank when its dispatch
//             starts. That is stream-ordered after its previous use of the received tensors (they are valid until its
//             next dispatch), so a sender that has seen every rank's counts of this call may write to every rank.
//             The counts also give each sender its rows' place: after the rows of lower sources.
//   combine:  every rank SETs its combine sequence at every rank when its combine starts: its landing rows of the
//             previous combine are reduced, so they may be overwritten.
// Then each block stores its rows, and once they are all stored (a barrier, then a system fence: a release) ADDs 1
// to a done word at each rank; a rank's call ends when every block of every rank has said so (gridDim.x x seq,
// cumulative: every rank launches the same grid).
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

// MoE expert parallelism for large batches (io.gda4j.moe, high throughput): the layout of a rank's top-k, and the
// zeroing of the counters it and the ring dispatch add to, which both kinds of world share (kernels/moe_ring.cu:
// worlds with rings; kernels/moe_direct.cu: direct worlds). One block per channel (a contiguous range of the rank's
// tokens); what it writes is what the dispatch of either kind reads. gda4j/moe/ht.cuh has the channel ranges, gda4j/moe/params.cuh the parameter block.
#include <gda4j/gda4j.cuh>
#include <gda4j/moe/ht.cuh>

using namespace gda4j;
using namespace gda4j::moe;

// Zeroes n 32-bit words (counters the next kernel adds to).
extern "C" __global__ void gda4j_moe_zero(int32_t* p, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = 0;
}

// Layout of this rank's top-k (num_tokens x top_k, int64, -1 = none). Grid: num_channels blocks. Writes, per token
// and rank, the token's slot in its channel's stream to that rank (-1: not sent), per (channel, rank) counts, tokens
// per rank and per expert (tokens_per_* zeroed before), and in layout_status the first entry outside
// [-1, num_experts) as (token * top_k + slot + 1).
extern "C" __global__ void __launch_bounds__(128) gda4j_moe_layout(const MoeParams* prm, const int64_t* topk,
                                                                    int num_tokens) {
  const int c = blockIdx.x;
  const int n = prm->head.nranks, k = prm->head.top_k;
  const int experts = prm->head.num_experts, local = prm->head.num_local_experts;
  const int t0 = channel_start(num_tokens, prm->num_channels, c);
  const int t1 = channel_end(num_tokens, prm->num_channels, c);
  int32_t* per_expert = reinterpret_cast<int32_t*>(prm->tokens_per_expert);
  for (int i = t0 * k + threadIdx.x; i < t1 * k; i += blockDim.x) {
    const int64_t e = topk[i];
    if (e == -1) continue;
    if (e < -1 || e >= experts) {
      atomicCAS(reinterpret_cast<unsigned long long*>(prm->layout_status), 0ull, (unsigned long long)i + 1);
      continue;
    }
    atomicAdd(per_expert + e, 1);
  }
  for (int r = threadIdx.x; r < n; r += blockDim.x) {
    int32_t count = 0;
    int32_t* slot = reinterpret_cast<int32_t*>(prm->token_slot);
    for (int t = t0; t < t1; ++t) {
      bool in = false;
      for (int j = 0; j < k; ++j) {
        const int64_t e = topk[(int64_t)t * k + j];
        in |= e >= 0 && e < experts && e / local == r;
      }
      slot[(int64_t)t * n + r] = in ? count++ : -1;
    }
    reinterpret_cast<int32_t*>(prm->channel_count)[c * n + r] = count;
    atomicAdd(reinterpret_cast<int32_t*>(prm->tokens_per_rank) + r, count);
  }
}

// MoE expert parallelism for large batches (io.gda4j.moe, high throughput) in direct worlds: dispatch and combine
// where every pair of ranks is p2p or self (MoeBuffer decides once, for every process), each row stored once,
// straight into its final place at the peer. Grids of 2 * num_channels blocks of 512 threads (__launch_bounds__(512):
// 128 registers a thread), every block of every rank resident at once, since they wait for each other.
// gda4j/moe/direct.cuh has the protocol's shared parts, gda4j/moe/params.cuh the parameter block; the layout kernel
// is in kernels/moe_layout.cu.
#include <gda4j/gda4j.cuh>
#include <gda4j/moe/direct.cuh>

using namespace gda4j;
using namespace gda4j::moe;

// A named namespace, not an anonymous one: nvcc names the static __shared__ variables of functions in an anonymous
// namespace with a hash of the file's absolute path, which would make the PTX depend on where the repository lives.
namespace moe_kernels {

// Thread d < n of a block (nothing for the others): waits until this rank's word `word(d)` reaches `want`; the
// block learns the first failure. Returns the status every thread shares (one barrier inside, one after).
template <class Word>
__device__ __forceinline__ int block_wait_all(const Local& l, const MoeParams* prm, int n, Word word, uint64_t want,
                                              uint64_t* seen, int* shared_status) {
  if (threadIdx.x == 0) *shared_status = OK;
  __syncthreads();
  if (threadIdx.x < (unsigned)n) {
    const int d = (int)threadIdx.x;
    const uint64_t sig = signal_offset(prm, word(d));
    uint64_t v = load_acquire_sys(reinterpret_cast<const uint64_t*>(l.heap + sig));
    int st = OK;
    if (v < want) {
      const uint64_t start = global_timer_ns();
      st = wait_until(l, sig, CMP_GE, want, &v);
      atomicAdd(reinterpret_cast<unsigned long long*>(prm->wait_ns) + d,
                (unsigned long long)(global_timer_ns() - start));
    }
    if (seen) seen[d] = v;
    if (st != OK) *shared_status = st;
  }
  __syncthreads();
  return *shared_status;
}

// Thread d < n: after the block's stores (the barrier orders them before the fence: fence + relaxed ADD is a release
// of them all), ADDs 1 to rank d's word `word`.
__device__ __forceinline__ void block_release_to_all(const DeviceView* view, int n, uint64_t word_offset) {
  __syncthreads();
  if (threadIdx.x < (unsigned)n) {
    const Peer p = peer_of(view, (int)threadIdx.x);
    if (fence(p) == OK) signal(p, word_offset, SIGNAL_ADD, 1);
  }
}

// The direct kernels number their calls themselves (no gda4j_moe_next_call launch before them: one launch less per
// call): each reads `*word + 1` as its sequence number at its start, and block 0 stores it once every block of the
// rank has read it (after the done wait, which counts every block's ADD, and each block adds after its read) or when
// it gives up on a failure. Either way the word moves on by exactly one per call, in eager calls and graph replays.
__device__ __forceinline__ void finish_call(uint64_t* word, uint64_t seq) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *word = seq;
}

// The direct dispatch's unit of work: a lane's batch of 16-byte vectors (loaded together, then stored to every
// destination), and a part of a row (one batch per lane: 3.5 KiB, a quarter of a BF16 row of hidden 7168).
constexpr int DIRECT_BATCH = 7;
constexpr uint64_t DIRECT_PART_VECS = 32 * DIRECT_BATCH;

// Where a received array of device memory (recv_x .. recv_src, as the params name them here) lies in `heap`'s copy of
// the direct receive block: every rank lays it out the same.
__device__ __forceinline__ char* direct_field(const MoeParams* prm, char* heap, uint64_t field) {
  return heap + prm->direct_recv + (field - prm->recv_x);
}

// Combine entry (thread d < n announces at rank d, then the block waits for every rank): SETs
// `seq << 1 | pull` at every rank, so the ranks also learn whether each combines from its heap's combine input (pull)
// or from a tensor of its own (push). The two cannot mix: a pulling rank reads its peers' combine inputs, where a
// pushing rank's peers store its landing rows. A rank that finds another doing the other kind records the error and
// stops (the abort then ends every other rank's waits). No rank can already be in its next combine here: that one
// starts after this rank's done word of this one.
__device__ __forceinline__ int combine_enter(const DeviceView* view, const Local& l, const MoeParams* prm,
                                             const SignalIndex& si, uint64_t seq, uint32_t pull, uint64_t* seen,
                                             int* shared_status) {
  const int n = prm->head.nranks, me = prm->head.rank;
  if (threadIdx.x < (unsigned)n) {
    signal(peer_of(view, (int)threadIdx.x), signal_offset(prm, si.combine_entry(me)), SIGNAL_SET, seq << 1 | pull);
  }
  int st = block_wait_all(l, prm, n, [&](int s) { return si.combine_entry(s); }, seq << 1, seen, shared_status);
  if (st != OK) return st;
  if (threadIdx.x < (unsigned)n && (seen[threadIdx.x] & 1) != pull) {
    const int d = (int)threadIdx.x;
    record_error(view, ERROR_COMBINE_INPUT_MIXED, OP_WAIT_UNTIL, d, signal_offset(prm, si.combine_entry(d)),
                 seq << 1 | pull, seen[d], CMP_GE, 0);
    *shared_status = ERR_ABORTED;
  }
  __syncthreads();
  return *shared_status;
}

}  // namespace moe_kernels
using namespace moe_kernels;

// Dispatch in a direct world. Grid: 2 * num_channels blocks of 512 threads. Each token's place at a destination is
// its channel's first row there plus the token's slot, so any warp can take any token: a warp claims the next part of
// a token's row from a counter (dispatch_claims) and loads it once and stores it to every rank that holds one of the
// token's experts (part 0 also the scales, source and top-k). Claimed, not dealt out: blocks do not move
// rows across NVLink at the same rate (2x H100, 24 blocks, tokens dealt out by channel: the first block done after
// 102 us, the last after 213 us, the mean 146 us), so a fixed share left the call waiting for the slowest block.
// Block 0 zeroes local_expert_counts; `*call_seq_word` counts this rank's dispatches (finish_call).
extern "C" __global__ void __launch_bounds__(512) gda4j_moe_dispatch_direct(const DeviceView* view,
                                                                             const MoeParams* prm, const char* x,
                                                                             const float* scales,
                                                                             const int64_t* topk,
                                                                             const float* weights, int num_tokens,
                                                                             uint64_t* call_seq_word) {
  __shared__ uint64_t counts[MAX_RANKS * MAX_RANKS];        // [src][dst]: seq << 32 | rows, as posted
  __shared__ int32_t first_row[MAX_CHANNELS * MAX_RANKS];  // [channel][dst]: the channel's first row there
  __shared__ int status;
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const uint64_t seq = *call_seq_word + 1;
  const int n = prm->head.nranks, me = prm->head.rank, k = prm->head.top_k, local = prm->head.num_local_experts;
  const int channels = prm->num_channels;
  unsigned long long* claim = dispatch_claims(prm, seq);
  const uint32_t lane = lane_id();
  const SignalIndex si = signal_index(prm);
  const Local l = local_of(view);
  const int parity = (int)(seq & 1);

  // 1. Announce this call and its counts at every rank (every block does: the SETs are the same, and no block then
  //    waits for another block of its own rank to be scheduled).
  const int32_t* per_rank = reinterpret_cast<const int32_t*>(prm->tokens_per_rank);
  if (threadIdx.x < (unsigned)(n * n)) {
    const int q = (int)threadIdx.x / n, d = (int)threadIdx.x % n;
    signal(peer_of(view, q), signal_offset(prm, si.direct_count(parity, me, d)), SIGNAL_SET,
           seq << 32 | (uint32_t)per_rank[d]);
  }
  // 2. Every rank's counts of this call (thread i < n * n waits for word i of the matrix).
  if (threadIdx.x == 0) status = OK;
  __syncthreads();
  if (threadIdx.x < (unsigned)(n * n)) {
    const int s = (int)threadIdx.x / n, d = (int)threadIdx.x % n;
    const uint64_t sig = signal_offset(prm, si.direct_count(parity, s, d));
    uint64_t v = load_acquire_sys(reinterpret_cast<const uint64_t*>(l.heap + sig));
    if (v >> 32 < seq) {
      const uint64_t start = global_timer_ns();
      const int st = wait_until(l, sig, CMP_GE, seq << 32, &v);
      atomicAdd(reinterpret_cast<unsigned long long*>(prm->wait_ns) + s,
                (unsigned long long)(global_timer_ns() - start));
      if (st != OK) status = st;
    }
    counts[threadIdx.x] = v;
  }
  __syncthreads();
  if (status != OK) return finish_call(call_seq_word, seq);
  // Every channel's first row at every destination: after the rows of lower sources, then of lower channels.
  const int32_t* cc = reinterpret_cast<const int32_t*>(prm->channel_count);
  for (int i = (int)threadIdx.x; i < channels * n; i += (int)blockDim.x) first_row[i] = cc[i];
  __syncthreads();
  if (threadIdx.x < (unsigned)n) {
    const int d = (int)threadIdx.x;
    int64_t b = 0;
    for (int s = 0; s < me; ++s) b += (uint32_t)counts[s * n + d];
    for (int c = 0; c < channels; ++c) {
      const int32_t rows = first_row[c * n + d];
      first_row[c * n + d] = (int32_t)b;
      b += rows;
    }
  }
  __syncthreads();
  // Combines find each channel's rows at each rank from here: the push combine its own rows in y, the pull combine
  // every rank's rows in that rank's combine input.
  if (blockIdx.x == 0) {
    int32_t* offsets = reinterpret_cast<int32_t*>(prm->recv_channel_offset);
    for (int i = (int)threadIdx.x; i < channels * n; i += (int)blockDim.x) offsets[i] = first_row[i];
    int32_t* expert_counts = reinterpret_cast<int32_t*>(prm->local_expert_counts);
    for (int i = (int)threadIdx.x; i < local; i += (int)blockDim.x) expert_counts[i] = 0;  // counted in step 5
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int64_t total = 0;
    for (int s = 0; s < n; ++s) total += (uint32_t)counts[s * n + me];
    *reinterpret_cast<int32_t*>(prm->recv_total) = (int32_t)total;
  }
  __syncthreads();

  // 3. The rows. Lane d < n holds destination d's receive block.
  char* dest_heap = nullptr;
  if (lane < (uint32_t)n) dest_heap = peer_of(view, (int)lane).heap;
  const int per_channel = tokens_per_channel(num_tokens, channels);
  const int32_t* slot = reinterpret_cast<const int32_t*>(prm->token_slot);
  const uint64_t payload = (uint64_t)prm->payload_bytes;
  const int spr = prm->scales_per_row;
  // Units of work: a token's row in parts of DIRECT_PART_VECS vectors (the last part may be shorter). A warp claims
  // one unit at a time, so when the claims run out the warps still busy hold at most one part each: with whole rows
  // (14 KiB BF16) the last warps of a rank kept it waiting about one row's copy time at the link's per-warp rate.
  const uint64_t vecs = payload / 16;
  const int64_t parts = (int64_t)((vecs + DIRECT_PART_VECS - 1) / DIRECT_PART_VECS);
  const int64_t units = (int64_t)num_tokens * parts;
  // The next claim is made before the current unit's rows go out, so its round trip overlaps them.
  int64_t next = 0;
  if (lane == 0) next = (int64_t)atomicAdd(claim, 1ull);
  next = __shfl_sync(0xffffffffu, next, 0);
  while (next < units) {
    const int t = (int)(next / parts);
    const int64_t part = next % parts;
    if (lane == 0) next = (int64_t)atomicAdd(claim, 1ull);
    int64_t at = -1;
    if (lane < (uint32_t)n) {
      const int32_t sl = slot[(int64_t)t * n + lane];
      const int64_t base = first_row[(t / per_channel) * n + lane];
      // Within the destination's received rows even where the slots and the counts disagree (a graph replayed after
      // a newer layout): such a call's rows are wrong, but no store lands outside them.
      if (sl >= 0 && base + sl < (int64_t)n * prm->max_tokens) at = base + sl;
    }
    const uint32_t dests = __ballot_sync(0xffffffffu, at >= 0);
    next = __shfl_sync(0xffffffffu, next, 0);
    if (dests == 0) continue;
    // Payload: each lane loads its vectors of the part once and stores them to every destination.
    const int4* src = reinterpret_cast<const int4*>(x + (int64_t)t * payload);
    const uint64_t v0 = (uint64_t)part * DIRECT_PART_VECS;
    const uint64_t v1 = min(vecs, v0 + DIRECT_PART_VECS);
    for (uint64_t i = v0 + lane; i < v1; i += 32 * DIRECT_BATCH) {
      int4 v[DIRECT_BATCH];
#pragma unroll
      for (int j = 0; j < DIRECT_BATCH; ++j) {
        if (i + 32 * j < v1) v[j] = src[i + 32 * j];
      }
      for (uint32_t m = dests; m != 0; m &= m - 1) {
        const int d = __ffs(m) - 1;
        char* h = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(dest_heap), d));
        const int64_t row = __shfl_sync(0xffffffffu, at, d);
        int4* dst = reinterpret_cast<int4*>(direct_field(prm, h, prm->recv_x) + row * payload);
#pragma unroll
        for (int j = 0; j < DIRECT_BATCH; ++j) {
          if (i + 32 * j < v1) dst[i + 32 * j] = v[j];
        }
      }
    }
    if (part != 0) continue;
    // Scales, source, and the top-k as the destination sees it (its local expert index, -1 for another rank's).
    int64_t e = -1;
    float wt = 0.0f;
    if (lane < (uint32_t)k) {
      e = topk[(int64_t)t * k + lane];
      wt = weights[(int64_t)t * k + lane];
    }
    for (uint32_t m = dests; m != 0; m &= m - 1) {
      const int d = __ffs(m) - 1;
      char* h = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(dest_heap), d));
      const int64_t row = __shfl_sync(0xffffffffu, at, d);
      if (spr > 0) {
        warp_copy4(direct_field(prm, h, prm->recv_scales) + row * spr * 4, scales + (int64_t)t * spr, spr, lane);
      }
      if (lane == 0) {
        reinterpret_cast<int2*>(direct_field(prm, h, prm->recv_src))[row] = make_int2(me, t);
      }
      if (lane < (uint32_t)k) {
        const bool here = e >= 0 && e / local == d;
        reinterpret_cast<int32_t*>(direct_field(prm, h, prm->recv_topk_idx))[row * k + lane] =
            here ? (int32_t)(e - (int64_t)d * local) : -1;
        reinterpret_cast<float*>(direct_field(prm, h, prm->recv_topk_weights))[row * k + lane] = here ? wt : 0.0f;
      }
    }
  }

  // 4. Done at every rank; then wait until every block of every rank is done here.
  block_release_to_all(view, n, signal_offset(prm, si.dispatch_done(me)));
  const int st = block_wait_all(l, prm, n, [&](int s) { return si.dispatch_done(s); },
                                (uint64_t)gridDim.x * seq, nullptr, &status);
  finish_call(call_seq_word, seq);
  if (st != OK) return;

  // 5. Per-local-expert counts over this block's share of the received rows, in shared memory (first_row's words,
  //    free after step 3) and then one add per expert and block: adding each entry to device memory made 128
  //    counters (2 ranks of 256 experts) the target of every block's atomics. More local experts than the words
  //    take several passes.
  int64_t total = 0;
  for (int s = 0; s < n; ++s) total += (uint32_t)counts[s * n + me];
  const int64_t r0 = total * blockIdx.x / gridDim.x, r1 = total * (blockIdx.x + 1) / gridDim.x;
  const int32_t* idx = reinterpret_cast<const int32_t*>(prm->recv_topk_idx);
  int32_t* expert_counts = reinterpret_cast<int32_t*>(prm->local_expert_counts);
  int32_t* hist = first_row;
  constexpr int HIST = MAX_CHANNELS * MAX_RANKS;
  for (int e0 = 0; e0 < local; e0 += HIST) {
    const int ew = min(HIST, local - e0);
    for (int i = (int)threadIdx.x; i < ew; i += (int)blockDim.x) hist[i] = 0;
    __syncthreads();
    for (int64_t i = r0 * k + threadIdx.x; i < r1 * k; i += blockDim.x) {
      const int32_t le = idx[i] - e0;
      if (le >= 0 && le < ew) atomicAdd(hist + le, 1);
    }
    __syncthreads();
    for (int i = (int)threadIdx.x; i < ew; i += (int)blockDim.x) {
      if (hist[i] != 0) atomicAdd(expert_counts + e0 + i, hist[i]);
    }
    __syncthreads();
  }
}

namespace moe_kernels {

// Sums one token's rows (lane r < n holds rank r's row or null) into out_row.
__device__ __forceinline__ void combine_token(const char* my_row, uint16_t* out_row, int hidden, uint32_t lane) {
  const uint32_t have = __ballot_sync(0xffffffffu, my_row != nullptr);
  // UNROLL 256-channel slices at once, and two ranks' loads of them issued together before either is summed: a slice
  // at a time made a token a chain of 28 memory round trips (hidden 7168), 7 at once 4 per rank, and a peer's round
  // trip over NVLink is about twice a local one, so the local rows' loads now wait beside a peer's, not before them.
  // Ranks are still summed in increasing order.
  constexpr int UNROLL = 7;
  for (int h0 = 0; h0 < hidden; h0 += 256 * UNROLL) {
    float acc[UNROLL][8];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[u][e] = 0.0f;
    }
    for (uint32_t m = have; m != 0;) {
      const int a = __ffs(m) - 1;
      m &= m - 1;
      const int b = m != 0 ? __ffs(m) - 1 : -1;
      if (b >= 0) m &= m - 1;
      const char* row_a =
          reinterpret_cast<const char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(my_row), a));
      const char* row_b = reinterpret_cast<const char*>(
          __shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(my_row), b < 0 ? a : b));
      uint4 va[UNROLL], vb[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int h = h0 + u * 256 + (int)lane * 8;
        const bool in = h < hidden;
        va[u] = in ? *reinterpret_cast<const uint4*>(row_a + 2 * (uint64_t)h) : make_uint4(0, 0, 0, 0);
        vb[u] = in && b >= 0 ? *reinterpret_cast<const uint4*>(row_b + 2 * (uint64_t)h) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const uint32_t w[4] = {va[u].x, va[u].y, va[u].z, va[u].w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          acc[u][2 * e] += bf16_to_float((uint16_t)(w[e] & 0xffff));
          acc[u][2 * e + 1] += bf16_to_float((uint16_t)(w[e] >> 16));
        }
      }
      if (b >= 0) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          const uint32_t w[4] = {vb[u].x, vb[u].y, vb[u].z, vb[u].w};
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            acc[u][2 * e] += bf16_to_float((uint16_t)(w[e] & 0xffff));
            acc[u][2 * e + 1] += bf16_to_float((uint16_t)(w[e] >> 16));
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int h = h0 + u * 256 + (int)lane * 8;
      if (h < hidden) *reinterpret_cast<uint4*>(out_row + h) = pack_bf16x8(acc[u]);
    }
  }
}

}  // namespace moe_kernels

// Combine in a direct world. Grid: 2 * num_channels blocks of 512 threads. The grid's warps take the rows this rank
// received (y, in dispatch's output order) in turn and store each in its source's landing row [me][token], except
// this rank's own, which the sums read from y in place; once every rank's rows have landed, each block sums its share
// of this rank's tokens: for each token the rows of the ranks it went to, in increasing rank order, in FP32 from +0.0,
// rounded once to BF16 (io.gda4j.moe.MoeReference's order). `*combine_seq_word` counts this rank's combines, pushed
// or pulled (finish_call).
// Tried and dropped (2 ranks, 4096 tokens, 2x H200, 12 channels, 0.32 ms as it is): half the warps sending while the
// other half summed the tokens whose rows had landed, in 8 phases: 0.50 ms (eight warps per block send too slowly, a
// warp's row copy waits for its loads of y); every warp sending a phase, then summing the phase before, in 4 phases
// (a done word per phase): 0.43 ms.
extern "C" __global__ void __launch_bounds__(512) gda4j_moe_combine_direct(const DeviceView* view,
                                                                            const MoeParams* prm, const uint16_t* y,
                                                                            uint16_t* out, int num_tokens,
                                                                            uint64_t* combine_seq_word) {
  __shared__ int status;
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const uint64_t seq = *combine_seq_word + 1;
  const int n = prm->head.nranks, me = prm->head.rank, hidden = prm->head.hidden;
  const uint32_t lane = lane_id();
  const int warp = (int)(threadIdx.x >> 5), warps = (int)(blockDim.x >> 5);
  const SignalIndex si = signal_index(prm);
  const Local l = local_of(view);
  const uint64_t row_bytes = (uint64_t)prm->combine_row_bytes;

  // 1. This rank's landing rows are free (its previous combine is reduced): say so at every rank, then wait until
  //    every rank has said so.
  __shared__ uint64_t entries[MAX_RANKS];
  int st = combine_enter(view, l, prm, si, seq, 0, entries, &status);
  if (st != OK) return finish_call(combine_seq_word, seq);

  // 2. The rows, dealt out to the grid's warps in turn: they are sorted by source, so contiguous shares would leave
  //    the blocks holding this rank's own rows idle.
  char* src_heap = nullptr;
  if (lane < (uint32_t)n) src_heap = peer_of(view, (int)lane).heap;
  const int64_t total = *reinterpret_cast<const int32_t*>(prm->recv_total);
  const int2* from = reinterpret_cast<const int2*>(prm->recv_src);
  for (int64_t i = (int64_t)blockIdx.x * warps + warp; i < total; i += (int64_t)gridDim.x * warps) {
    const int2 src_token = from[i];  // (source rank, source token)
    if (src_token.x == me) continue;
    char* h = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(src_heap), src_token.x));
    warp_copy16<14>(h + prm->combine_landing + ((uint64_t)me * prm->max_tokens + src_token.y) * row_bytes,
                    y + i * hidden, row_bytes, lane);
  }
  block_release_to_all(view, n, signal_offset(prm, si.combine_done(me)));
  st = block_wait_all(l, prm, n, [&](int s) { return si.combine_done(s); }, (uint64_t)gridDim.x * seq, nullptr,
                      &status);
  finish_call(combine_seq_word, seq);
  if (st != OK) return;

  // 3. The sums. Lane r < n holds the token's row from rank r (null where the token did not go to r).
  const int32_t* slots = reinterpret_cast<const int32_t*>(prm->token_slot);
  const int32_t* own_base = reinterpret_cast<const int32_t*>(prm->recv_channel_offset);
  const int64_t q0 = (int64_t)num_tokens * blockIdx.x / gridDim.x;
  const int64_t q1 = (int64_t)num_tokens * (blockIdx.x + 1) / gridDim.x;
  const int per_channel = tokens_per_channel(num_tokens, prm->num_channels);
  for (int64_t t = q0 + warp; t < q1; t += warps) {
    const char* my_row = nullptr;
    if (lane < (uint32_t)n) {
      const int32_t sl = slots[t * n + lane];
      if (sl >= 0) {
        my_row = (int)lane == me
                     ? reinterpret_cast<const char*>(y) +
                           (own_base[(t / per_channel) * n + me] + (int64_t)sl) * row_bytes
                     : l.heap + prm->combine_landing + ((uint64_t)lane * prm->max_tokens + t) * row_bytes;
      }
    }
    combine_token(my_row, out + t * hidden, hidden, lane);
  }
}

// Combine in a direct world where every rank's expert outputs are in its heap's combine input (params.combine_landing,
// in dispatch's output order; io.gda4j.moe.MoeRank#combineInput): each rank pulls its tokens' rows from the ranks
// they went to and sums them as it reads, so each row crosses NVLink once, as in the push combine, but no rank waits
// for every row to land before it sums, and nothing is written twice. Grid: 2 * num_channels blocks of 512 threads;
// a block takes a contiguous share of this rank's tokens, a warp one token at a time. For each token, the rows of the
// ranks it went to, in increasing rank order, in FP32 from +0.0, rounded once to BF16: the push combine's sums, bit
// for bit. A token's row at rank r is its dispatch slot there plus where this rank's channel began at r
// (recv_channel_offset, written by the dispatch).
//   entry: SET seq << 1 | 1 at every rank: this rank's combine input is written (stream order) and may be read
//   done:  each block ADDs 1 at every rank once it has read its rows; a rank returns once every block of every rank
//          has, so no rank's next expert outputs overwrite rows a peer still reads.
// Tried and dropped (2x H100, 4096 tokens, 12 channels, 0.198 ms as it is): warps claiming units from a counter, as
// the dispatch does, instead of contiguous shares: 0.225 ms with (token, 1792-channel slice) units, 0.209 ms with
// whole tokens.
extern "C" __global__ void __launch_bounds__(512) gda4j_moe_combine_pull(const DeviceView* view,
                                                                          const MoeParams* prm, uint16_t* out,
                                                                          int num_tokens,
                                                                          uint64_t* combine_seq_word) {
  __shared__ int status;
  __shared__ uint64_t entries[MAX_RANKS];
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const uint64_t seq = *combine_seq_word + 1;
  const int n = prm->head.nranks, hidden = prm->head.hidden;
  const uint32_t lane = lane_id();
  const int warp = (int)(threadIdx.x >> 5), warps = (int)(blockDim.x >> 5);
  const SignalIndex si = signal_index(prm);
  const Local l = local_of(view);
  const uint64_t row_bytes = (uint64_t)prm->combine_row_bytes;

  int st = combine_enter(view, l, prm, si, seq, 1, entries, &status);
  if (st != OK) return finish_call(combine_seq_word, seq);

  // Lane r < n holds rank r's combine input.
  const char* input = nullptr;
  if (lane < (uint32_t)n) input = peer_of(view, (int)lane).heap + prm->combine_landing;
  const int32_t* slots = reinterpret_cast<const int32_t*>(prm->token_slot);
  const int32_t* first = reinterpret_cast<const int32_t*>(prm->recv_channel_offset);
  const int64_t rows = (int64_t)n * prm->max_tokens;
  const int64_t q0 = (int64_t)num_tokens * blockIdx.x / gridDim.x;
  const int64_t q1 = (int64_t)num_tokens * (blockIdx.x + 1) / gridDim.x;
  const int per_channel = tokens_per_channel(num_tokens, prm->num_channels);
  for (int64_t t = q0 + warp; t < q1; t += warps) {
    const char* row = nullptr;
    if (lane < (uint32_t)n) {
      const int32_t sl = slots[t * n + lane];
      const int64_t at = sl < 0 ? -1 : first[(t / per_channel) * n + lane] + (int64_t)sl;
      // Inside the rank's combine input even where the slots and the offsets disagree (a graph replayed after a
      // newer layout): such a call's sums are wrong, but no read leaves the input.
      if (at >= 0 && at < rows) row = input + at * row_bytes;
    }
    combine_token(row, out + t * hidden, hidden, lane);
  }
  block_release_to_all(view, n, signal_offset(prm, si.combine_done(prm->head.rank)));
  block_wait_all(l, prm, n, [&](int s) { return si.combine_done(s); }, (uint64_t)gridDim.x * seq, nullptr, &status);
  finish_call(combine_seq_word, seq);
}

// MoE expert parallelism for large batches (io.gda4j.moe, high throughput) in direct worlds: where every pair of
// ranks is p2p or self (MoeBuffer decides once, for every process), each row goes once, straight into its final place
// at the peer. Two forms move the rows (io.gda4j.moe.ht.MoeRowPath): stores from the SMs (gda4j_moe_dispatch_direct,
// gda4j_moe_combine_direct, gda4j_moe_combine_pull), or the copy engines (gda4j_moe_pack, then the host's copies,
// then gda4j_moe_dispatch_wait; gda4j_moe_combine_copy_enter, the copies, gda4j_moe_combine_sum). The layout
// exchange (gda4j_moe_layout_exchange) runs once per layout, off the calls. Grids whose blocks wait for other ranks
// are sized so every block of every rank is resident at once (MoeBuffer checks them against the GPU); blocks are at
// most 512 threads (__launch_bounds__(512): 128 registers a thread).
// gda4j/moe/direct.cuh has the protocol's shared parts, gda4j/moe/params.cuh the parameter block; the layout kernel
// is in kernels/moe_layout.cu.
//
// Nothing but rows on a call's path:
//   layout exchange  every rank SETs its row counts per destination at every rank and stores each rank's share of its
//                    per-expert counts there (direct_count and expert_table, by the exchange's parity); each rank
//                    then knows where its rows go at every rank, what it receives from every rank, and its experts'
//                    counts, once per layout (a dispatch with the handle reuses them, as DeepEP's cached handle does).
//   regions          the received tensors alternate between two heap regions by the dispatch's parity (the host's
//                    count of dispatches), so a rank writes the region its peers' previous dispatch did not: its own
//                    previous dispatch ended once every peer's rows of it had landed, so every peer had started that
//                    dispatch and was done with the region's earlier rows. A dispatch that writes the region its
//                    previous one wrote (a captured dispatch replayed) first waits for every rank's entry word.
//   completion       each block fences after its rows and counts itself in device memory; the last block of the rank
//                    SETs the call's sequence at every rank, once, and the call ends when every rank's word has it.
//   combine          a push writes the landing rows only after its dispatch ended (every rank had started it, so every
//                    rank's earlier combine was over) and waits at entry only for a second combine of one dispatch; a
//                    pull waits for every rank's entry (its combine input is written) and, at the end, for every
//                    rank's reads of its own.
#include <gda4j/gda4j.cuh>
#include <gda4j/moe/direct.cuh>

using namespace gda4j;
using namespace gda4j::moe;

// A named namespace, not an anonymous one: nvcc names the static __shared__ variables of functions in an anonymous
// namespace with a hash of the file's absolute path, which would make the PTX depend on where the repository lives.
namespace moe_kernels {

// Thread d < n of a block (nothing for the others): waits until this rank's word `word(d)` reaches `want` (skipping
// this rank's own when `skip_self`); the block learns the first failure. Returns the status every thread shares (one
// barrier inside, one after).
template <class Word>
__device__ __forceinline__ int block_wait_all(const Local& l, const MoeParams* prm, int n, Word word, uint64_t want,
                                              uint64_t* seen, int* shared_status, bool skip_self = false) {
  if (threadIdx.x == 0) *shared_status = OK;
  __syncthreads();
  if (threadIdx.x < (unsigned)n && !(skip_self && (int)threadIdx.x == prm->head.rank)) {
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

// Thread d < n SETs `value` at rank d's word `word_offset` (relaxed: fence first to order earlier stores).
__device__ __forceinline__ void block_signal_all(const DeviceView* view, int n, uint64_t word_offset, uint64_t value) {
  if (threadIdx.x < (unsigned)n) signal(peer_of(view, (int)threadIdx.x), word_offset, SIGNAL_SET, value);
}

__device__ __forceinline__ uint64_t* direct_state(const MoeParams* prm, int word) {
  return reinterpret_cast<uint64_t*>(prm->direct_state) + word;
}

// Whether this block is the rank's last of the call to get here: every block counts itself in direct_state[counter]
// after its stores (a barrier, then an add that releases and acquires at GPU scope); the one whose add completes the
// count has every block's stores in its causality past, and resets the counter for the next call. One system fence
// for all of them, by the caller that signals (rank_done), not one per block: each would sit in its block's path.
// Every block of the grid must call it once.
__device__ __forceinline__ bool last_block(const MoeParams* prm, int counter, int* shared_flag) {
  __syncthreads();
  if (threadIdx.x == 0) {
    int32_t* c = reinterpret_cast<int32_t*>(direct_state(prm, counter));
    const bool last = atom_add_acq_rel_gpu(c, 1) == (int32_t)gridDim.x - 1;
    if (last) *c = 0;   // every block has counted: the next call, in stream order, starts from 0
    *shared_flag = last;
  }
  __syncthreads();
  return *shared_flag != 0;
}

// The rank's completion, once per call: the last block (last_block) SETs `seq` at every rank's `word_offset`, each
// after a system fence: one release of every block's stores. Returns whether this block was the last.
__device__ __forceinline__ bool rank_done(const DeviceView* view, const MoeParams* prm, int counter,
                                          uint64_t word_offset, uint64_t seq, int* shared_flag) {
  const bool last = last_block(prm, counter, shared_flag);
  if (last && threadIdx.x < (unsigned)prm->head.nranks) {
    const Peer p = peer_of(view, (int)threadIdx.x);
    if (fence(p) == OK) signal(p, word_offset, SIGNAL_SET, seq);
  }
  return last;
}

// The layout exchange's block of `parity` (ExchangeIndex words).
__device__ __forceinline__ int32_t* exchange_block(const MoeParams* prm, int parity) {
  return reinterpret_cast<int32_t*>(prm->exchange + (uint64_t)parity * exchange_index(prm).block_bytes());
}

// The direct kernels number their calls themselves (no launch before them: one launch less per call): each block
// reads `*word + 1` as its sequence number at its start, and the rank's last block stores it once every block has
// counted itself done (each counts after its read), or when it gives up on a failure. Either way the word moves on
// by exactly one per call, in eager calls and graph replays.
__device__ __forceinline__ void finish_call(uint64_t* word, uint64_t seq) {
  if (threadIdx.x == 0) *word = seq;
}

// The direct dispatch's unit of work: a lane's batch of 16-byte vectors (loaded together, then stored to every
// destination), and a part of a row (one batch per lane: 3.5 KiB, a quarter of a BF16 row of hidden 7168).
constexpr int DIRECT_BATCH = 7;
constexpr uint64_t DIRECT_PART_VECS = 32 * DIRECT_BATCH;

// Where a received array (recv_x .. recv_src, as the params name them in region 0) lies in `heap`'s copy of the
// direct receive block's region `region`: every rank lays it out the same.
__device__ __forceinline__ char* direct_field(const MoeParams* prm, char* heap, int region, uint64_t field) {
  return heap + prm->direct_recv + (uint64_t)region * prm->direct_recv_bytes + (field - prm->recv_x);
}

// Combine entry (thread d < n announces at rank d, then the block waits for every rank): SETs
// `seq << 1 | pull` at every rank, so the ranks also learn whether each combines from its heap's combine input (pull)
// or from a tensor of its own (push). The two cannot mix: a pulling rank reads its peers' combine inputs, where a
// pushing rank's peers store its landing rows. A rank that finds another doing the other kind records the error and
// stops (the abort then ends every other rank's waits). `wait` false: announce only (a push that need not wait).
// Every block announces (the SETs are the same), so no block waits for another block of its own rank to be scheduled.
__device__ __forceinline__ int combine_enter(const DeviceView* view, const Local& l, const MoeParams* prm,
                                             const SignalIndex& si, uint64_t seq, uint32_t pull, bool wait,
                                             uint64_t* seen, int* shared_status) {
  const int n = prm->head.nranks, me = prm->head.rank;
  block_signal_all(view, n, signal_offset(prm, si.combine_entry(me)), seq << 1 | pull);
  if (!wait) {
    if (threadIdx.x == 0) *shared_status = OK;
    __syncthreads();
    return OK;
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

// A dispatch's entry: where this call writes the region the previous dispatch wrote (only a replayed capture does:
// eager calls alternate), the peers may still read that region's rows until they start this call, so every rank
// announces its start and waits for every other's. `staged` (the copy-engine form) also waits where no combine ran
// since the previous dispatch: a NIC may still be reading that dispatch's staging arrays, which this call rewrites,
// until every peer has received them, and a peer that started this call has (a combine in between proves as much).
// Every rank takes the same branch: the state follows the calls, which every rank makes alike.
__device__ __forceinline__ int dispatch_enter(const DeviceView* view, const Local& l, const MoeParams* prm,
                                              const SignalIndex& si, uint64_t seq, int region, bool staged,
                                              int* shared_status) {
  const uint64_t flags = *direct_state(prm, DSTATE_FLAGS);
  const bool again = (flags & DSTATE_DISPATCHED) != 0 &&
                     ((int)((flags >> 1) & 1) == region || (staged && (flags & DSTATE_COMBINED) == 0));
  if (!again) {
    if (threadIdx.x == 0) *shared_status = OK;
    __syncthreads();
    return OK;
  }
  const int n = prm->head.nranks;
  block_signal_all(view, n, signal_offset(prm, si.dispatch_entry(prm->head.rank)), seq);
  return block_wait_all(l, prm, n, [&](int s) { return si.dispatch_entry(s); }, seq, nullptr, shared_status);
}

// The state a finished dispatch leaves (the rank's last block writes it after the call's waits).
__device__ __forceinline__ void dispatch_leaves(const MoeParams* prm, int region) {
  if (threadIdx.x == 0) *direct_state(prm, DSTATE_FLAGS) = DSTATE_DISPATCHED | (uint64_t)region << 1;
}

__device__ __forceinline__ void combine_leaves(const MoeParams* prm) {
  if (threadIdx.x == 0) *direct_state(prm, DSTATE_FLAGS) |= DSTATE_COMBINED;
}

// The rows of a dispatch, by the grid's warps: each claims the next unit of work (a part of a token's row) from a
// counter, loads it once and stores it to every rank that holds one of the token's experts (the first part also the
// scales, source and top-k as the destination sees them). Claimed, not dealt out: blocks do not move rows across
// NVLink at the same rate (2x H100, 24 blocks, tokens dealt out by channel: the first block done after 102 us, the
// last after 213 us, the mean 146 us), so a fixed share left the call waiting for the slowest block. The last wave's
// worth of units is cut in halves, so the warps still busy when the claims run out hold half a part each.
// `to_stage`: the copy-engine form, where this rank's own rows go into its received tensors and every other rank's
// into the staging arrays for it (params.stage_*, [dest][row]), which the host's copies then move; else every row
// goes straight into the destination's received tensors in the heap.
__device__ void dispatch_rows(const DeviceView* view, const MoeParams* prm, const char* x, const float* scales,
                              const int64_t* topk, const float* weights, int num_tokens, uint64_t seq, int xparity,
                              int region, bool to_stage, const int32_t* first_row) {
  const int n = prm->head.nranks, me = prm->head.rank, k = prm->head.top_k, local = prm->head.num_local_experts;
  const int channels = prm->num_channels;
  unsigned long long* claim = dispatch_claims(prm, seq);
  const uint32_t lane = lane_id();
  const ExchangeIndex xi = exchange_index(prm);
  const int32_t* xb = exchange_block(prm, xparity);
  // Lane d < n: destination d's heap (null: its staging arrays), and what to subtract from a row there to index them.
  char* dest_heap = nullptr;
  int64_t rebase = 0;
  int64_t limit = 0;
  if (lane < (uint32_t)n) {
    if (!to_stage || (int)lane == me) {
      dest_heap = peer_of(view, (int)lane).heap;
      limit = (int64_t)n * prm->max_tokens;
    } else {
      rebase = xb[xi.dest_base((int)lane)];
      limit = prm->max_tokens;
    }
  }
  const int per_channel = tokens_per_channel(num_tokens, channels);
  const int32_t* slot = reinterpret_cast<const int32_t*>(prm->token_slot);
  const uint64_t payload = (uint64_t)prm->payload_bytes;
  const int spr = prm->scales_per_row;
  const uint64_t vecs = payload / 16;
  const int64_t parts = (int64_t)((vecs + DIRECT_PART_VECS - 1) / DIRECT_PART_VECS);
  const int64_t units = (int64_t)num_tokens * parts;
  const int64_t tail = min(units, (int64_t)gridDim.x * (blockDim.x / 32));
  const int64_t whole = units - tail;
  const int64_t claims = whole + 2 * tail;
  // The next claim is made before the current unit's rows go out, so its round trip overlaps them.
  int64_t next = 0;
  if (lane == 0) next = (int64_t)atomicAdd(claim, 1ull);
  next = __shfl_sync(0xffffffffu, next, 0);
  while (next < claims) {
    const int64_t unit = next < whole ? next : whole + (next - whole) / 2;
    const int half = next < whole ? -1 : (int)((next - whole) & 1);
    const int t = (int)(unit / parts);
    const int64_t part = unit % parts;
    if (lane == 0) next = (int64_t)atomicAdd(claim, 1ull);
    int64_t at = -1;
    if (lane < (uint32_t)n) {
      const int32_t sl = slot[(int64_t)t * n + lane];
      const int64_t row = (int64_t)first_row[(t / per_channel) * n + lane] + sl - rebase;
      // Within the destination's rows even where the slots and the counts disagree (a graph replayed after a newer
      // layout): such a call's rows are wrong, but no store lands outside them.
      if (sl >= 0 && row >= 0 && row < limit) at = row;
    }
    const uint32_t dests = __ballot_sync(0xffffffffu, at >= 0);
    next = __shfl_sync(0xffffffffu, next, 0);
    if (dests == 0) continue;
    // Payload: each lane loads its vectors of the part (or half part) once and stores them to every destination.
    const int4* src = reinterpret_cast<const int4*>(x + (int64_t)t * payload);
    uint64_t v0 = (uint64_t)part * DIRECT_PART_VECS;
    uint64_t v1 = min(vecs, v0 + DIRECT_PART_VECS);
    if (half >= 0) {
      const uint64_t mid = v0 + (v1 - v0 + 1) / 2;
      if (half == 0) v1 = mid; else v0 = mid;
    }
    // The whole warp takes every trip of this loop, even a lane with no vector left in it: the broadcasts below name
    // all 32 lanes, and a lane that had left the loop would never join them (a part or half part of fewer than 32
    // vectors, such as the 16-vector halves of a 4096-byte row's tail, hung the warp).
    for (uint64_t base = v0; base < v1; base += 32 * DIRECT_BATCH) {
      const uint64_t i = base + lane;
      int4 v[DIRECT_BATCH];
#pragma unroll
      for (int j = 0; j < DIRECT_BATCH; ++j) {
        if (i + 32 * j < v1) v[j] = src[i + 32 * j];
      }
      for (uint32_t m = dests; m != 0; m &= m - 1) {
        const int d = __ffs(m) - 1;
        char* h = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(dest_heap), d));
        const int64_t row = __shfl_sync(0xffffffffu, at, d);
        int4* dst = reinterpret_cast<int4*>(
            h != nullptr ? direct_field(prm, h, region, prm->recv_x) + row * payload
                         : reinterpret_cast<char*>(prm->stage_x) + ((int64_t)d * prm->max_tokens + row) * payload);
#pragma unroll
        for (int j = 0; j < DIRECT_BATCH; ++j) {
          if (i + 32 * j < v1) dst[i + 32 * j] = v[j];
        }
      }
    }
    if (part != 0 || half > 0) continue;
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
      const int64_t staged = (int64_t)d * prm->max_tokens + row;
      float* sc = h != nullptr ? reinterpret_cast<float*>(direct_field(prm, h, region, prm->recv_scales)) + row * spr
                               : reinterpret_cast<float*>(prm->stage_scales) + staged * spr;
      int2* from = h != nullptr ? reinterpret_cast<int2*>(direct_field(prm, h, region, prm->recv_src)) + row
                                : reinterpret_cast<int2*>(prm->stage_src) + staged;
      int32_t* idx = h != nullptr ? reinterpret_cast<int32_t*>(direct_field(prm, h, region, prm->recv_topk_idx)) + row * k
                                  : reinterpret_cast<int32_t*>(prm->stage_topk_idx) + staged * k;
      float* wts = h != nullptr ? reinterpret_cast<float*>(direct_field(prm, h, region, prm->recv_topk_weights)) + row * k
                                : reinterpret_cast<float*>(prm->stage_topk_weights) + staged * k;
      if (spr > 0) warp_copy4(sc, scales + (int64_t)t * spr, spr, lane);
      if (lane == 0) *from = make_int2(me, t);
      if (lane < (uint32_t)k) {
        const bool here = e >= 0 && e / local == d;
        idx[lane] = here ? (int32_t)(e - (int64_t)d * local) : -1;
        wts[lane] = here ? wt : 0.0f;
      }
    }
  }
}

// Every channel's first row at every destination, from the layout exchange's block, into shared memory.
__device__ __forceinline__ void load_first_rows(const MoeParams* prm, int xparity, int32_t* first_row) {
  const ExchangeIndex xi = exchange_index(prm);
  const int32_t* xb = exchange_block(prm, xparity);
  const int n = prm->head.nranks;
  for (int i = (int)threadIdx.x; i < prm->num_channels * n; i += (int)blockDim.x) {
    first_row[i] = xb[xi.first_row(i / n, i % n)];
  }
  __syncthreads();
}

}  // namespace moe_kernels
using namespace moe_kernels;

// The layout exchange, once per layout (MoeRank.layout queues it after its own kernel, and the host does not wait for
// it). One block. Exchange number `xseq` (counted from 1 by the host; every rank makes the same layouts) uses the
// words and table of its parity: a rank can be at most one exchange ahead of another, since its previous one waited
// for every rank's counts. Writes the ExchangeIndex block of its parity in device memory, and into the host block
// (`host`, mapped memory) the same words and then, last, the stamp xseq.
extern "C" __global__ void __launch_bounds__(512) gda4j_moe_layout_exchange(const DeviceView* view,
                                                                             const MoeParams* prm, uint64_t xseq) {
  __shared__ int32_t counts[MAX_RANKS * MAX_RANKS];  // [src][dst]
  __shared__ int status;
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const int n = prm->head.nranks, me = prm->head.rank, L = prm->head.num_local_experts, C = prm->num_channels;
  const int parity = (int)(xseq & 1);
  const SignalIndex si = signal_index(prm);
  const ExchangeIndex xi = exchange_index(prm);
  const Local l = local_of(view);
  const uint32_t lane = lane_id();
  const int warp = (int)(threadIdx.x >> 5), warps = (int)(blockDim.x >> 5);
  const int32_t* per_expert = reinterpret_cast<const int32_t*>(prm->tokens_per_expert);
  const int32_t* per_rank = reinterpret_cast<const int32_t*>(prm->tokens_per_rank);
  // 1. Rank q's share of this rank's per-expert counts into q's table, then (each lane fenced after its stores) this
  //    rank's row counts at q. A peer whose heap the kernel cannot store into (the proxy's) gets the share with one
  //    put from this rank's outgoing half of the table, which the fence orders before the counts.
  for (int q = warp; q < n; q += warps) {
    const Peer p = peer_of(view, q);
    const uint64_t share = prm->expert_table + (((uint64_t)parity * n + me) * L) * 4;
    if (is_direct(p)) {
      int32_t* table = reinterpret_cast<int32_t*>(p.heap + share);
      for (int e = (int)lane; e < L; e += 32) table[e] = per_expert[q * L + e];
    } else {
      const uint64_t out = prm->expert_table + ((uint64_t)2 * n * L + ((uint64_t)parity * n + q) * L) * 4;
      int32_t* mine = reinterpret_cast<int32_t*>(l.heap + out);
      for (int e = (int)lane; e < L; e += 32) mine[e] = per_expert[q * L + e];
      __syncwarp();  // orders the lanes' stores before lane 0's put, whose push fences them system-wide
      if (lane == 0) (void)put(p, share, out, 4 * (uint64_t)L);  // a failure aborts the waits below
      __syncwarp();
    }
    fence(p);
    __syncwarp();
    for (int d = (int)lane; d < n; d += 32) {
      signal(p, signal_offset(prm, si.direct_count(parity, me, d)), SIGNAL_SET, xseq << 32 | (uint32_t)per_rank[d]);
    }
  }
  // 2. Every rank's counts of this exchange (thread i < n * n waits for word i of the matrix).
  if (threadIdx.x == 0) status = OK;
  __syncthreads();
  for (int i = (int)threadIdx.x; i < n * n; i += (int)blockDim.x) {
    const int s = i / n, d = i % n;
    const uint64_t sig = signal_offset(prm, si.direct_count(parity, s, d));
    uint64_t v = load_acquire_sys(reinterpret_cast<const uint64_t*>(l.heap + sig));
    if (v < (xseq << 32)) {
      const uint64_t start = global_timer_ns();
      const int st = wait_until(l, sig, CMP_GE, xseq << 32, &v);
      atomicAdd(reinterpret_cast<unsigned long long*>(prm->wait_ns) + s,
                (unsigned long long)(global_timer_ns() - start));
      if (st != OK) status = st;
    }
    counts[i] = (int32_t)(uint32_t)v;
  }
  __syncthreads();
  if (status != OK) return;   // no stamp: the host's wait for it reports the device error
  __threadfence();             // the table's entries were released with the counts this block acquired
  // 3. The results, into the device block and the host block.
  int32_t* xb = exchange_block(prm, parity);
  char* host = reinterpret_cast<char*>(prm->exchange_host) + (uint64_t)parity * xi.host_block_bytes();
  int32_t* hb = reinterpret_cast<int32_t*>(host + 8);
  const int32_t* cc = reinterpret_cast<const int32_t*>(prm->channel_count);  // [C][N]: this rank's rows
  auto put = [&](int word, int32_t v) {
    xb[word] = v;
    hb[word] = v;
  };
  if (threadIdx.x < (unsigned)n) {
    const int d = (int)threadIdx.x;
    int64_t base = 0;
    for (int s = 0; s < me; ++s) base += counts[s * n + d];
    put(xi.dest_base(d), (int32_t)base);
    put(xi.dest_rows(d), counts[me * n + d]);
    for (int c = 0; c < C; ++c) {
      put(xi.first_row(c, d), (int32_t)base);
      base += cc[c * n + d];
    }
    const int s = d;
    int64_t from = 0;
    for (int s2 = 0; s2 < s; ++s2) from += counts[s2 * n + me];
    put(xi.src_base(s), (int32_t)from);
    put(xi.src_rows(s), counts[s * n + me]);
  }
  if (threadIdx.x == 0) {
    int64_t total = 0;
    for (int s = 0; s < n; ++s) total += counts[s * n + me];
    put(xi.recv_total(), (int32_t)total);
  }
  const int32_t* mine = reinterpret_cast<const int32_t*>(l.heap + prm->expert_table) + (int64_t)parity * n * L;
  for (int e = (int)threadIdx.x; e < L; e += (int)blockDim.x) {
    int32_t sum = 0;
    for (int s = 0; s < n; ++s) sum += mine[s * L + e];
    put(xi.expert_count(e), sum);
  }
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    *reinterpret_cast<volatile uint64_t*>(host) = xseq;
  }
}

// Dispatch in a direct world, by the SMs. Grid: 2 * num_channels blocks of 512 threads. Each token's place at a
// destination is its channel's first row there (from the layout exchange of parity `xparity`) plus the token's slot,
// so any warp can take any token (dispatch_rows). The received tensors are the heap region `region` (the host's
// dispatch parity). `*call_seq_word` counts this rank's dispatches (finish_call).
extern "C" __global__ void __launch_bounds__(512) gda4j_moe_dispatch_direct(const DeviceView* view,
                                                                             const MoeParams* prm, const char* x,
                                                                             const float* scales,
                                                                             const int64_t* topk,
                                                                             const float* weights, int num_tokens,
                                                                             uint64_t* call_seq_word, int xparity,
                                                                             int region) {
  __shared__ int32_t first_row[MAX_CHANNELS * MAX_RANKS];  // [channel][dst]: the channel's first row there
  __shared__ int status;
  __shared__ int last;
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const uint64_t seq = *call_seq_word + 1;
  const int n = prm->head.nranks, me = prm->head.rank;
  const SignalIndex si = signal_index(prm);
  const Local l = local_of(view);
  int st = dispatch_enter(view, l, prm, si, seq, region, false, &status);
  if (st == OK) {
    load_first_rows(prm, xparity, first_row);
    dispatch_rows(view, prm, x, scales, topk, weights, num_tokens, seq, xparity, region, false, first_row);
  }
  // Done at every rank, once; the last block then waits until every rank's rows have landed here.
  if (!rank_done(view, prm, DSTATE_DISPATCH_BLOCKS, signal_offset(prm, si.dispatch_done(me)), seq, &last)) return;
  st = block_wait_all(l, prm, n, [&](int s) { return si.dispatch_done(s); }, seq, nullptr, &status, true);
  dispatch_leaves(prm, region);
  finish_call(call_seq_word, seq);
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

// Each block sums its contiguous share of this rank's tokens into `out`, a warp a token at a time (combine_token):
// lane r < n gives the token's row from rank r, row(t, r, at) with `at` the token's row among what rank r received
// (where its channel's rows begin there, from the layout exchange, plus its slot), null where it did not go to r.
template <class Row>
__device__ __forceinline__ void sum_tokens(const MoeParams* prm, const int32_t* xb, int num_tokens, uint16_t* out,
                                           Row row) {
  const int n = prm->head.nranks, hidden = prm->head.hidden;
  const uint32_t lane = lane_id();
  const int warp = (int)(threadIdx.x >> 5), warps = (int)(blockDim.x >> 5);
  const ExchangeIndex xi = exchange_index(prm);
  const int32_t* slots = reinterpret_cast<const int32_t*>(prm->token_slot);
  const int64_t q0 = (int64_t)num_tokens * blockIdx.x / gridDim.x;
  const int64_t q1 = (int64_t)num_tokens * (blockIdx.x + 1) / gridDim.x;
  const int per_channel = tokens_per_channel(num_tokens, prm->num_channels);
  for (int64_t t = q0 + warp; t < q1; t += warps) {
    const char* my_row = nullptr;
    if (lane < (uint32_t)n) {
      const int32_t sl = slots[t * n + lane];
      if (sl >= 0) my_row = row(t, (int)lane, xb[xi.first_row((int)(t / per_channel), (int)lane)] + (int64_t)sl);
    }
    combine_token(my_row, out + t * hidden, hidden, lane);
  }
}

}  // namespace moe_kernels

// Combine in a direct world, pushed by the SMs. Grid: 2 * num_channels blocks of 512 threads. The grid's warps take
// the rows this rank received (y, in dispatch's output order) in turn and store each in its source's landing row
// [me][token], except this rank's own, which the sums read from y in place; once every rank's rows have landed, each
// block sums its share of this rank's tokens: for each token the rows of the ranks it went to, in increasing rank
// order, in FP32 from +0.0, rounded once to BF16 (io.gda4j.moe.check.MoeReference's order). `xparity` and `region` are
// its dispatch's. `*combine_seq_word` counts this rank's combines, pushed or pulled (finish_call).
// Tried and dropped (2 ranks, 4096 tokens, 2x H200, 12 channels, 0.32 ms as it is): half the warps sending while the
// other half summed the tokens whose rows had landed, in 8 phases: 0.50 ms (eight warps per block send too slowly, a
// warp's row copy waits for its loads of y); every warp sending a phase, then summing the phase before, in 4 phases
// (a done word per phase): 0.43 ms.
extern "C" __global__ void __launch_bounds__(512) gda4j_moe_combine_direct(const DeviceView* view,
                                                                            const MoeParams* prm, const uint16_t* y,
                                                                            uint16_t* out, int num_tokens,
                                                                            uint64_t* combine_seq_word, int xparity,
                                                                            int region) {
  __shared__ int status;
  __shared__ int last;
  __shared__ uint64_t entries[MAX_RANKS];
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const uint64_t seq = *combine_seq_word + 1;
  const int n = prm->head.nranks, me = prm->head.rank, hidden = prm->head.hidden;
  const uint32_t lane = lane_id();
  const int warp = (int)(threadIdx.x >> 5), warps = (int)(blockDim.x >> 5);
  const SignalIndex si = signal_index(prm);
  const ExchangeIndex xi = exchange_index(prm);
  const int32_t* xb = exchange_block(prm, xparity);
  const Local l = local_of(view);
  const uint64_t row_bytes = (uint64_t)prm->combine_row_bytes;

  // 1. The landing rows are free once every rank started this combine's dispatch (which this rank's dispatch waited
  //    for), unless a combine of that dispatch ran already: then wait for every rank's entry into this one.
  const bool again = (*direct_state(prm, DSTATE_FLAGS) & DSTATE_COMBINED) != 0;
  int st = combine_enter(view, l, prm, si, seq, 0, again, entries, &status);

  // 2. The rows, dealt out to the grid's warps in turn: they are sorted by source, so contiguous shares would leave
  //    the blocks holding this rank's own rows idle.
  if (st == OK) {
    char* src_heap = nullptr;
    if (lane < (uint32_t)n) src_heap = peer_of(view, (int)lane).heap;
    const int64_t total = xb[xi.recv_total()];
    const int2* from = reinterpret_cast<const int2*>(direct_field(prm, l.heap, region, prm->recv_src));
    for (int64_t i = (int64_t)blockIdx.x * warps + warp; i < total; i += (int64_t)gridDim.x * warps) {
      const int2 src_token = from[i];  // (source rank, source token)
      if (src_token.x == me || src_token.x < 0 || src_token.x >= n) continue;
      char* h = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(src_heap), src_token.x));
      warp_copy16<14>(h + prm->combine_landing + ((uint64_t)me * prm->max_tokens + src_token.y) * row_bytes,
                      y + i * hidden, row_bytes, lane);
    }
  }
  const bool last_block = rank_done(view, prm, DSTATE_COMBINE_BLOCKS, signal_offset(prm, si.combine_done(me)), seq,
                                    &last);
  const int landed = block_wait_all(l, prm, n, [&](int s) { return si.combine_done(s); }, seq, nullptr, &status, true);
  if (last_block) {
    combine_leaves(prm);
    finish_call(combine_seq_word, seq);
  }
  if (st != OK || landed != OK) return;

  // 3. The sums: this rank's own rows from y in place, every other rank's from its landing rows [r][token].
  const int64_t rows = (int64_t)n * prm->max_tokens;
  sum_tokens(prm, xb, num_tokens, out, [&](int64_t t, int r, int64_t at) -> const char* {
    if (r != me) return l.heap + prm->combine_landing + ((uint64_t)r * prm->max_tokens + t) * row_bytes;
    return at < rows ? reinterpret_cast<const char*>(y) + at * row_bytes : nullptr;
  });
}

// Combine in a direct world where every rank's expert outputs are in its heap's combine input (params.combine_landing,
// in dispatch's output order; io.gda4j.moe.MoeRank#combineInput): each rank pulls its tokens' rows from the ranks
// they went to and sums them as it reads, so each row crosses NVLink once, as in the push combine, but no rank waits
// for every row to land before it sums, and nothing is written twice. Grid: 2 * num_channels blocks of 512 threads;
// a block takes a contiguous share of this rank's tokens, a warp one token at a time. For each token, the rows of the
// ranks it went to, in increasing rank order, in FP32 from +0.0, rounded once to BF16: the push combine's sums, bit
// for bit. A token's row at rank r is its dispatch slot there plus where this rank's channel began at r (the layout
// exchange's first_row).
//   entry: SET seq << 1 | 1 at every rank: this rank's combine input is written (stream order) and may be read
//   done:  the rank's last block SETs seq at every rank once all its blocks have read their rows; a rank returns once
//          every rank has, so no rank's next expert outputs overwrite rows a peer still reads.
// Tried and dropped (2x H100, 4096 tokens, 12 channels, 0.198 ms as it is): warps claiming units from a counter, as
// the dispatch does, instead of contiguous shares: 0.225 ms with (token, 1792-channel slice) units, 0.209 ms with
// whole tokens.
extern "C" __global__ void __launch_bounds__(512) gda4j_moe_combine_pull(const DeviceView* view,
                                                                          const MoeParams* prm, uint16_t* out,
                                                                          int num_tokens,
                                                                          uint64_t* combine_seq_word, int xparity) {
  __shared__ int status;
  __shared__ int last;
  __shared__ uint64_t entries[MAX_RANKS];
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const uint64_t seq = *combine_seq_word + 1;
  const int n = prm->head.nranks, me = prm->head.rank;
  const uint32_t lane = lane_id();
  const SignalIndex si = signal_index(prm);
  const int32_t* xb = exchange_block(prm, xparity);
  const Local l = local_of(view);
  const uint64_t row_bytes = (uint64_t)prm->combine_row_bytes;

  const int st = combine_enter(view, l, prm, si, seq, 1, true, entries, &status);
  if (st == OK) {
    // Lane r < n holds rank r's combine input.
    const char* input = nullptr;
    if (lane < (uint32_t)n) input = peer_of(view, (int)lane).heap + prm->combine_landing;
    const int64_t rows = (int64_t)n * prm->max_tokens;
    // Inside the rank's combine input even where the slots and the offsets disagree (a graph replayed after a newer
    // layout): such a call's sums are wrong, but no read leaves the input.
    sum_tokens(prm, xb, num_tokens, out, [&](int64_t, int, int64_t at) -> const char* {
      return at < rows ? input + at * row_bytes : nullptr;
    });
  }
  if (!rank_done(view, prm, DSTATE_COMBINE_BLOCKS, signal_offset(prm, si.combine_done(me)), seq, &last)) return;
  block_wait_all(l, prm, n, [&](int s) { return si.combine_done(s); }, seq, nullptr, &status, true);
  combine_leaves(prm);
  finish_call(combine_seq_word, seq);
}

// ---- The copy-engine form (io.gda4j.moe.ht.MoeRowPath.COPY_ENGINE): the SMs pack and sum, the copy engines move.

// Dispatch, first step: the rows into this rank's own received tensors (region `region`) and every other rank's into
// the staging arrays for it, contiguous in the order the destination keeps them, so the host's one copy per array
// and peer lands them where the destination's tensors expect them. Grid: 2 * num_channels blocks of 512 threads.
// Publishes the call's sequence in direct_state[DSTATE_DISPATCH_SEQ], which the host's last copy to each peer carries
// into the peer's done word after the rows (copies on one stream run in order). The call ends in
// gda4j_moe_dispatch_wait.
extern "C" __global__ void __launch_bounds__(512) gda4j_moe_pack(const DeviceView* view, const MoeParams* prm,
                                                                  const char* x, const float* scales,
                                                                  const int64_t* topk, const float* weights,
                                                                  int num_tokens, const uint64_t* call_seq_word,
                                                                  int xparity, int region) {
  __shared__ int32_t first_row[MAX_CHANNELS * MAX_RANKS];
  __shared__ int status;
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const uint64_t seq = *call_seq_word + 1;
  const SignalIndex si = signal_index(prm);
  const Local l = local_of(view);
  if (blockIdx.x == 0 && threadIdx.x == 0) *direct_state(prm, DSTATE_DISPATCH_SEQ) = seq;
  // The copies follow this kernel in stream order: waiting here holds them back too.
  if (dispatch_enter(view, l, prm, si, seq, region, true, &status) != OK) return;
  load_first_rows(prm, xparity, first_row);
  dispatch_rows(view, prm, x, scales, topk, weights, num_tokens, seq, xparity, region, true, first_row);
}

// Dispatch, last step (one block of 32 threads): waits until every other rank's copies have landed here (their last
// copy SETs this rank's done word to their sequence), then ends the call.
extern "C" __global__ void gda4j_moe_dispatch_wait(const DeviceView* view, const MoeParams* prm,
                                                    uint64_t* call_seq_word, int region) {
  __shared__ int status;
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const uint64_t seq = *call_seq_word + 1;
  const SignalIndex si = signal_index(prm);
  block_wait_all(local_of(view), prm, prm->head.nranks, [&](int s) { return si.dispatch_done(s); }, seq, nullptr,
                 &status, true);
  dispatch_leaves(prm, region);
  finish_call(call_seq_word, seq);
}

// Combine, first step (one block of 32 threads): publishes the call's sequence for the host's copies, announces the
// entry, and where a combine of this dispatch ran already waits for every rank's (its landing rows may still be
// summed there). The copies of this rank's received rows back to their sources follow it.
extern "C" __global__ void gda4j_moe_combine_copy_enter(const DeviceView* view, const MoeParams* prm,
                                                         const uint64_t* combine_seq_word) {
  __shared__ int status;
  __shared__ uint64_t entries[MAX_RANKS];
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const uint64_t seq = *combine_seq_word + 1;
  if (threadIdx.x == 0) *direct_state(prm, DSTATE_COMBINE_SEQ) = seq;
  const bool again = (*direct_state(prm, DSTATE_FLAGS) & DSTATE_COMBINED) != 0;
  combine_enter(view, local_of(view), prm, signal_index(prm), seq, 0, again, entries, &status);
}

// Combine, last step: once every other rank's rows have landed in this rank's copy-engine landing rows
// (params.ce_landing, [expert rank][row], each rank's rows in the order this rank's dispatch packed them), each block
// sums its share of this rank's tokens as the push combine does (this rank's own rows read from y in place). Grid:
// 2 * num_channels blocks of 512 threads.
extern "C" __global__ void __launch_bounds__(512) gda4j_moe_combine_sum(const DeviceView* view, const MoeParams* prm,
                                                                         const uint16_t* y, uint16_t* out,
                                                                         int num_tokens, uint64_t* combine_seq_word,
                                                                         int xparity) {
  __shared__ int status;
  __shared__ int last;
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const uint64_t seq = *combine_seq_word + 1;
  const int n = prm->head.nranks, me = prm->head.rank;
  const uint32_t lane = lane_id();
  const SignalIndex si = signal_index(prm);
  const ExchangeIndex xi = exchange_index(prm);
  const int32_t* xb = exchange_block(prm, xparity);
  const Local l = local_of(view);
  const uint64_t row_bytes = (uint64_t)prm->combine_row_bytes;
  const int landed = block_wait_all(l, prm, n, [&](int s) { return si.combine_done(s); }, seq, nullptr, &status,
                                    true);
  if (landed == OK) {
    // Rank r's rows here are in the order this rank packed them for r: after dest_base(r) there.
    int64_t rebase = 0;
    if (lane < (uint32_t)n) rebase = xb[xi.dest_base((int)lane)];
    const int64_t rows = (int64_t)n * prm->max_tokens;
    sum_tokens(prm, xb, num_tokens, out, [&](int64_t, int r, int64_t at) -> const char* {
      if (r == me) return at < rows ? reinterpret_cast<const char*>(y) + at * row_bytes : nullptr;
      const int64_t i = at - rebase;
      return i >= 0 && i < prm->max_tokens ? l.heap + prm->ce_landing + ((uint64_t)r * prm->max_tokens + i) * row_bytes
                                           : nullptr;
    });
  }
  if (!last_block(prm, DSTATE_COMBINE_BLOCKS, &last)) return;
  combine_leaves(prm);
  finish_call(combine_seq_word, seq);
}

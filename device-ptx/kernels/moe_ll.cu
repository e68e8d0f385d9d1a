// MoE expert parallelism for decoding (io.gda4j.moe, low latency): route, dispatch (send, receive), combine (send,
// receive). Each half is its own kernel, so the host can return after the sends and receive later (the
// send/receive split); no kernel waits for the host and none reads host memory, so a CUDA graph can hold them.
// gda4j/moe/ll.cuh has the buffer layout and the counters; io.gda4j.moe.MoeLowLatencyReference is what they must
// produce, bit for bit.
//
// Ordering (DESIGN.md's per-transport rules):
//  - a row to an expert: over p2p the warp stores it into the peer's heap; over proxy/ibgda it is cast into this
//    rank's staging copy and put (one put for the payload, one for the scales, one for the source record);
//  - the count of an expert is SET after the rows: the block of a token, after every warp's stores (or puts) of its
//    rows, makes them visible (a block barrier, then a system fence by each counting lane of warp 0) and counts the
//    rows done on this GPU; the lane that completes a count calls fence(peer) (p2p: a system fence; proxy/ibgda:
//    in-order channels) and then signals, so a receiver that acquires the count sees every row;
//  - combine: the block of a local expert stores/puts all its rows, then (bar.sync) one thread per source rank
//    fences and SETs the expert's flag at that rank. The combine's receive half waits for every expert's flag, so
//    it is a barrier over all ranks: a rank's next use of a buffer follows every rank's receive of the previous one.
#include <gda4j/gda4j.cuh>
#include <gda4j/moe/ll.cuh>

using namespace gda4j;
using namespace gda4j::moe;

// Warps per block of the token-parallel kernels (dispatch send, combine receive): ll_params.cuh, shared with Java.
constexpr int LL_TOKEN_WARPS = (int)MoeLowLatencyParamsDescriptor::TOKEN_WARPS;

// Shared words of the route kernel: a chunk's token bitmap and its slot base per expert (2 x 20 KiB).
constexpr int LL_ROUTE_SHARED_WORDS = 5120;

// Route of this rank's top-k (num_tokens x top_k, int64; -1 = none), on one block: raises seq[buf]; for each
// (token, k) the row's slot in its expert's range for this source (route_slot; -1 for -1, repeats and bad entries),
// rows per expert (send_count), send_done zeroed, and status[buf] = 0 or 1 + the first entry outside
// [-1, num_experts). Bad entries are then treated as -1, so every rank still completes the call (the host reports
// the status). The n-th token naming expert e gets slot n: a counting sort over chunks of 32 tokens, where a chunk's
// tokens naming e form a 32-bit mask, a token's slot is the popcount of the masks of earlier chunks plus that of the
// earlier bits of its own. Every step is one pass over the entries or the experts (6.5 us at 128 tokens of top-8 on
// an H100; a warp per expert scanning the tokens in order took 47 us).
extern "C" __global__ void __launch_bounds__(1024) gda4j_moe_ll_route(const LlParams* p, int buf, const int64_t* topk,
                                                                       int num_tokens) {
  if (p->magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  __shared__ unsigned long long bad;
  // mask[c][e - e0]: the tokens of chunk c (of this group) naming expert e; base[c][e - e0]: the slot of the chunk's
  // first such token. A group is as many chunks as fit beside a window of experts; more experts than fit in one
  // window (over 2560) take several windows.
  __shared__ uint32_t mask[LL_ROUTE_SHARED_WORDS];
  __shared__ int32_t base[LL_ROUTE_SHARED_WORDS];
  const LlBuffer b{p, buf};
  const int k_count = p->top_k, experts = p->num_experts;
  const int entries = num_tokens * k_count;
  if (threadIdx.x == 0) {
    bad = ~0ull;
    *b.seq() += 1;
  }
  int32_t* slot = b.route_slot();
  int32_t* count = b.send_count();
  for (int i = threadIdx.x; i < experts; i += blockDim.x) {
    b.send_done()[i] = 0;
    count[i] = 0;
  }
  // Pending entries hold -2 - expert until their slot replaces them; -1 for -1, repeats and bad entries. Entries
  // outside [0, num_experts) become -1 here: a bad int64 must not alias a valid expert once narrowed to 32 bits.
  for (int i = threadIdx.x; i < entries; i += blockDim.x) {
    const int64_t e = topk[i];
    if (e < -1 || e >= experts) atomicMin(&bad, (unsigned long long)i);
    bool first = e >= 0 && e < experts;
    const int64_t row = (int64_t)(i / k_count) * k_count;
    for (int64_t j = row; j < i && first; ++j) first = topk[j] != e;
    slot[i] = first ? -2 - (int32_t)e : -1;
  }
  __syncthreads();
  const int window = experts < LL_ROUTE_SHARED_WORDS / 2 ? experts : LL_ROUTE_SHARED_WORDS / 2;
  const int group_chunks = LL_ROUTE_SHARED_WORDS / window;
  const int chunks = (num_tokens + 31) / 32;
  for (int e0 = 0; e0 < experts; e0 += window) {
    const int ew = min(window, experts - e0);
    for (int c0 = 0; c0 < chunks; c0 += group_chunks) {
      const int gc = min(group_chunks, chunks - c0);
      for (int i = threadIdx.x; i < gc * ew; i += blockDim.x) mask[i] = 0;
      __syncthreads();
      const int first_entry = c0 * 32 * k_count, last_entry = min(entries, (c0 + gc) * 32 * k_count);
      for (int i = first_entry + threadIdx.x; i < last_entry; i += blockDim.x) {
        const int e = -2 - slot[i];
        if (e < e0 || e >= e0 + ew) continue;
        const int t = i / k_count;
        atomicOr(&mask[(t / 32 - c0) * ew + (e - e0)], 1u << (t & 31));
      }
      __syncthreads();
      for (int e = threadIdx.x; e < ew; e += blockDim.x) {
        int running = count[e0 + e];
        for (int c = 0; c < gc; ++c) {
          base[c * ew + e] = running;
          running += __popc(mask[c * ew + e]);
        }
        count[e0 + e] = running;
      }
      __syncthreads();
      for (int i = first_entry + threadIdx.x; i < last_entry; i += blockDim.x) {
        const int e = -2 - slot[i];
        if (e < e0 || e >= e0 + ew) continue;
        const int t = i / k_count, at = (t / 32 - c0) * ew + (e - e0);
        slot[i] = base[at] + __popc(mask[at] & ((1u << (t & 31)) - 1));
      }
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) *b.status() = bad == ~0ull ? 0 : bad + 1;
}

// A named namespace, not an anonymous one (see moe.cu: PTX free of path-dependent names).
namespace moe_ll_kernels {

// One thread: the count of `expert` from this rank, once its rows are out.
__device__ __forceinline__ int signal_count(const DeviceView* view, const LlBuffer& b, int expert, uint64_t seq,
                                            int32_t rows) {
  const LlParams* p = b.p;
  const Peer peer = peer_of(view, expert / p->num_local_experts);
  // Orders this thread's send_done atomic (which saw every other warp's rows out) before the signal's own path: a
  // proxy or ibgda signal claims its FIFO/queue slot with another atomic, which must come after those warps' claims.
  __threadfence_system();
  int st = fence(peer);
  if (st == OK) {
    st = signal(peer, b.dispatch_count(expert % p->num_local_experts, p->rank), SIGNAL_SET, seq << 32 | (uint32_t)rows);
  }
  return st;
}

// One block: token t to each distinct expert of its top-k. Every warp takes a share of the row's 128-channel groups
// (hidden 7168: 7 of 56 with 8 warps), so a row costs one round of loads instead of a warp walking it alone (one
// warp per token took 120 us for 128 tokens of top-8 on an H100, this kernel 19 us); then warp j puts the staged
// destinations j, j + 8, ... in parallel. `failed` is the block's shared error flag. Every thread of the block
// calls it.
__device__ int send_token(const DeviceView* view, const LlBuffer& b, const uint16_t* x, const int64_t* topk, int t,
                          uint64_t seq, int* failed) {
  const LlParams* p = b.p;
  const uint32_t lane = detail::lane_id();
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int k_count = p->top_k, local = p->num_local_experts, me = p->rank, hidden = p->hidden;
  const bool fp8 = p->dtype == LL_DTYPE_FP8_E4M3;
  const bool pow2 = p->power_of_two_scales != 0;
  // Lane k < top_k of every warp: its entry's expert, slot, and (for a p2p/self peer) the peer's heap. Each warp
  // loads them itself (L1 hits after the first) rather than waiting at a block barrier for one warp to share them.
  int expert = -1, slot = -1;
  char* direct_heap = nullptr;
  if (lane < (uint32_t)k_count) {
    slot = b.route_slot()[(int64_t)t * k_count + lane];
    if (slot >= 0) {
      expert = (int)topk[(int64_t)t * k_count + lane];
      const Peer peer = peer_of(view, expert / local);
      if (detail::is_direct(peer)) direct_heap = peer.heap;
    }
  }
  const uint32_t dests = __ballot_sync(0xffffffffu, slot >= 0);
  const uint32_t staged_dests = __ballot_sync(0xffffffffu, slot >= 0 && direct_heap == nullptr);
  const Local l = local_of(view);
  const int groups = hidden / LL_SCALE_BLOCK;
  const uint16_t* row = x + (int64_t)t * hidden;
  // Every address the row loop stores to, computed before it: the loop's stores go through char pointers that may
  // alias the params, so a params field read inside it is a fresh memory load after each store. Lane k: its
  // entry's row at a direct peer (null otherwise).
  char* direct_x = nullptr;
  float* direct_scales = nullptr;
  if (direct_heap != nullptr) {
    const uint64_t r = b.row(expert % local, me * p->max_tokens + slot);
    direct_x = direct_heap + b.recv_x(r);
    direct_scales = reinterpret_cast<float*>(direct_heap + b.recv_scales(r));
  }
  char* const stage_x = staged_dests != 0 ? l.heap + b.send_x(t) : nullptr;
  float* const stage_scales = staged_dests != 0 ? reinterpret_cast<float*>(l.heap + b.send_scales(t)) : nullptr;
  // This warp's groups g = warp, warp + warps, ...: all their loads issued before the first is used, all of them
  // cast, then stored destination by destination, so a destination's address is shuffled once per batch rather
  // than once per group (that shuffle loop was more than half of the kernel's instructions). x is the caller's
  // input, read-only while the kernel runs, so the loads may take the non-coherent path (__ldg).
  constexpr int BATCH = 8;
  const uint32_t direct_dests = dests & ~staged_dests;
  for (int g0 = warp; g0 < groups; g0 += BATCH * warps) {
    const int count = min(BATCH, (groups - g0 + warps - 1) / warps);  // warp-uniform
    uint2 v[BATCH];
    uint32_t q[BATCH];
    float scale[BATCH];
#pragma unroll
    for (int i = 0; i < BATCH; ++i) {
      if (i < count) v[i] = __ldg(reinterpret_cast<const uint2*>(row + (g0 + i * warps) * LL_SCALE_BLOCK + lane * 4));
    }
    if (fp8) {
#pragma unroll
      for (int i = 0; i < BATCH; ++i) {
        if (i < count) q[i] = warp_quantize_block(v[i], pow2, &scale[i]);
      }
    }
    for (uint32_t m = direct_dests; m != 0; m &= m - 1) {
      const int d = __ffs(m) - 1;
      char* dx = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(direct_x), d));
      float* ds = reinterpret_cast<float*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(direct_scales), d));
#pragma unroll
      for (int i = 0; i < BATCH; ++i) {
        if (i >= count) break;
        const int g = g0 + i * warps;
        if (fp8) {
          reinterpret_cast<uint32_t*>(dx + g * LL_SCALE_BLOCK)[lane] = q[i];
          if (lane == 0) ds[g] = scale[i];
        } else {
          reinterpret_cast<uint2*>(dx + 2 * g * LL_SCALE_BLOCK)[lane] = v[i];
        }
      }
    }
    if (staged_dests != 0) {
#pragma unroll
      for (int i = 0; i < BATCH; ++i) {
        if (i >= count) break;
        const int g = g0 + i * warps;
        if (fp8) {
          reinterpret_cast<uint32_t*>(stage_x + g * LL_SCALE_BLOCK)[lane] = q[i];
          if (lane == 0) stage_scales[g] = scale[i];
        } else {
          reinterpret_cast<uint2*>(stage_x + 2 * g * LL_SCALE_BLOCK)[lane] = v[i];
        }
      }
    }
  }
  // Source records: (source rank, token, top-k slot, 0), written by warp 0's lane of the entry.
  if (warp == 0 && slot >= 0) {
    const int4 rec = make_int4(me, t, (int)lane, 0);
    const uint64_t r = b.row(expert % local, me * p->max_tokens + slot);
    if (direct_heap != nullptr) {
      *reinterpret_cast<int4*>(direct_heap + b.recv_src(r)) = rec;
    } else {
      *reinterpret_cast<int4*>(l.heap + b.send_src(t, lane)) = rec;
    }
  }
  // Every warp's stores of the row are done before any warp puts it or warp 0 counts it.
  __syncthreads();
  if (staged_dests != 0) {
    // The staging rows were stored by every warp (ordered before this point by the barrier): visible system-wide
    // before the copy engine or the NIC reads them. Cumulative: this fence orders what the barrier showed this
    // thread, not only its own stores.
    __threadfence_system();
    __syncwarp();
    int st = OK, j = 0;
    for (uint32_t m = staged_dests; m != 0 && st == OK; m &= m - 1, ++j) {
      if (j % warps != warp) continue;
      const int d = __ffs(m) - 1;
      const int e = __shfl_sync(0xffffffffu, expert, d);
      const int s = __shfl_sync(0xffffffffu, slot, d);
      const Peer peer = peer_of(view, e / local);
      const uint64_t r = b.row(e % local, me * p->max_tokens + s);
      st = put_warp(peer, b.recv_x(r), b.send_x(t), p->payload_bytes);
      if (st == OK && fp8) st = put_warp(peer, b.recv_scales(r), b.send_scales(t), 4ull * p->scales_per_row);
      if (st == OK) st = put_warp(peer, b.recv_src(r), b.send_src(t, d), 4ull * LL_SRC_INTS);
      st = __shfl_sync(0xffffffffu, st, 0);
    }
    if (st != OK && lane == 0) *failed = 1;
  }
  __syncthreads();
  // Count the token's rows done: warp 0's lane of each entry, all at once (one after the other, thread 0's chain of
  // returning atomics was a large part of the kernel), each after a system fence that orders every warp's direct
  // stores and puts of the row (shown to it by the barrier above; the fence is cumulative) before its count. The
  // lane completing an expert's count signals it (ordering: see the file comment).
  if (warp == 0 && slot >= 0 && !*failed) {
    __threadfence_system();
    const int32_t done = atomicAdd(b.send_done() + expert, 1) + 1;
    if (done == b.send_count()[expert] && signal_count(view, b, expert, seq, done) != OK) *failed = 1;
  }
  // Warp 0's verdict reaches every thread before the next token (or the kernel's return) reuses `failed`.
  __syncthreads();
  return *failed ? ERR_ABORTED : OK;
}

}  // namespace moe_ll_kernels
using namespace moe_ll_kernels;

// Dispatch, send half. Grid: max(1, num_tokens) blocks (or fewer: they loop) of 32 * LL_TOKEN_WARPS threads;
// after gda4j_moe_ll_route on the same stream. Block b sends tokens b, b + gridDim.x, ... (send_token); experts
// this rank sends no row get their zero count from the first threads.
extern "C" __global__ void __launch_bounds__(32 * LL_TOKEN_WARPS) gda4j_moe_ll_dispatch_send(
    const DeviceView* view, const LlParams* p, int buf, const uint16_t* x, const int64_t* topk, int num_tokens) {
  if (p->magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  __shared__ int failed;
  const LlBuffer b{p, buf};
  const uint64_t seq = *b.seq();
  if (threadIdx.x == 0) failed = 0;
  __syncthreads();
  const int threads = gridDim.x * blockDim.x;
  for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < p->num_experts; e += threads) {
    if (b.send_count()[e] == 0 && signal_count(view, b, e, seq, 0) != OK) {
      failed = 1;
      break;
    }
  }
  __syncthreads();
  if (failed) return;  // block-uniform
  for (int t = blockIdx.x; t < num_tokens; t += gridDim.x) {
    if (send_token(view, b, x, topk, t, seq, &failed) != OK) return;  // block-uniform
  }
}

// Dispatch, receive half. Grid: ceil(num_local_experts / 8) blocks of 256 threads; warp le waits, lane s for
// source s, until source s's count of the call arrived, then writes recv_count_src[le][s] and recv_count[le].
extern "C" __global__ void __launch_bounds__(256) gda4j_moe_ll_dispatch_recv(const DeviceView* view, const LlParams* p,
                                                                              int buf) {
  if (p->magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  const LlBuffer b{p, buf};
  const int le = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31, n = p->nranks;
  if (le >= p->num_local_experts) return;
  const uint64_t seq = *b.seq();
  const Local l = local_of(view);
  int32_t rows = 0;
  int failed = 0;
  if (lane < n) {
    uint64_t v = 0;
    failed = ll_wait(l, p, b.dispatch_count(le, lane), seq << 32, lane, &v) != OK;
    rows = (int32_t)(uint32_t)v;
    b.recv_count_src()[le * n + lane] = failed ? 0 : rows;
  }
  if (__any_sync(0xffffffffu, failed)) return;
  for (int o = 16; o > 0; o >>= 1) rows += __shfl_xor_sync(0xffffffffu, rows, o);
  if (lane == 0) b.recv_count()[le] = rows;
}

// Combine, send half. Grid: num_local_experts blocks of 256 threads; after the dispatch's receive half. Block le
// returns each received row of its expert (y: [num_local_experts][slots][hidden] BF16, the dispatch's layout) to its
// source, into (token, top-k slot) of the source's combine buffer; then thread s SETs the expert's flag at rank s.
// 256 threads, not 1024: a 1024-thread block needs a whole SM's registers, and where ranks share a GPU the other
// ranks' receive blocks, spinning until this kernel's flags arrive, may hold a share of every SM.
extern "C" __global__ void __launch_bounds__(256) gda4j_moe_ll_combine_send(const DeviceView* view, const LlParams* p,
                                                                              int buf, const uint16_t* y) {
  if (p->magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  constexpr int MAX_RANKS = 16;
  __shared__ int32_t first_row[MAX_RANKS + 1];
  __shared__ int failed;
  const LlBuffer b{p, buf};
  const int le = blockIdx.x, n = p->nranks, hidden = p->hidden;
  const uint32_t lane = detail::lane_id();
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const uint64_t seq = *b.seq();
  const Local l = local_of(view);
  if (threadIdx.x == 0) {
    failed = 0;
    first_row[0] = 0;
    for (int s = 0; s < n; ++s) first_row[s + 1] = first_row[s] + b.recv_count_src()[le * n + s];
  }
  __syncthreads();
  const uint64_t row_bytes = 2ull * hidden;
  for (int j = warp; j < first_row[n]; j += warps) {
    int s = 0;
    while (j >= first_row[s + 1]) ++s;
    const uint64_t r = b.row(le, s * p->max_tokens + (j - first_row[s]));
    const int32_t* rec = reinterpret_cast<const int32_t*>(l.heap + b.recv_src(r));
    const int token = rec[1], k = rec[2];
    const Peer peer = peer_of(view, s);
    const uint16_t* src = y + r * hidden;
    int st = OK;
    if (detail::is_direct(peer)) {
      warp_copy16(peer.heap + b.combine_recv(token, k), src, row_bytes, lane);
    } else {
      warp_copy16(l.heap + b.combine_send(r), src, row_bytes, lane);
      __threadfence_system();
      __syncwarp();
      st = put_warp(peer, b.combine_recv(token, k), b.combine_send(r), row_bytes);
    }
    if (st != OK && lane == 0) failed = 1;
  }
  __syncthreads();
  if (failed == 0 && threadIdx.x < (unsigned)n) {
    const Peer peer = peer_of(view, threadIdx.x);
    if (fence(peer) == OK) signal(peer, b.combine_flag(p->rank * p->num_local_experts + le), SIGNAL_SET, seq);
  }
}

// Combine, receive half. Grid: blocks of 32 * LL_TOKEN_WARPS threads, any number (the host launches one warp per
// (token, 256-channel slice), capped at the rank's share of the SMs). Every block first waits for every expert's
// flag (a barrier over all ranks, see below); then the warp of (t, slice) sums its channels: acc = +0; for k = 0 ..
// top_k - 1 (skipping -1 and bad entries) acc = fma(weight[t][k], float(row(t, first k with that expert)[h]), acc);
// out = bf16_rn(acc): the order io.gda4j.moe.MoeLowLatencyReference documents.
extern "C" __global__ void __launch_bounds__(32 * LL_TOKEN_WARPS) gda4j_moe_ll_combine_recv(
    const DeviceView* view, const LlParams* p, int buf, const int64_t* topk, const float* weights, int num_tokens) {
  if (p->magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  __shared__ int barrier_failed;
  const LlBuffer b{p, buf};
  const uint32_t lane = detail::lane_id();
  const int k_count = p->top_k, experts = p->num_experts, hidden = p->hidden;
  const uint64_t seq = *b.seq();
  const Local l = local_of(view);
  if (threadIdx.x == 0) barrier_failed = 0;
  __syncthreads();
  // Every expert's flag of this call, not only those of this rank's tokens (DeepEP's combine waits for all of them
  // too): every rank SETs its flags after its combine send half, which comes after its dispatch receive half, so
  // once this kernel is done every rank is done with this call's buffer. Without it a rank whose tokens never meet
  // some rank R's experts could run its next dispatch on this buffer (two calls on; one call on under a CUDA graph
  // that replays one buffer) while R has yet to receive this one: R would take the newer count as this call's and
  // return rows into a combine buffer already in use again.
  // Each block waits for all of them itself, then the block barrier orders those acquires before every warp's loads
  // of the rows: no warp needs a wait of its own per token (an acquire per lane per (token, slice) made this kernel
  // 44 us at 128 tokens of top-8 on an H100; 22 us without). Every thread first looks at its experts' flags once;
  // only if one is missing does warp 0 wait for them all, so that while peers are still sending, a block has 32
  // threads polling memory, not 256 (where ranks share a GPU, the senders share its memory system with the
  // pollers). Block 0 alone adds its waits to wait_ns, so they count once.
  int arrived = 1;
  for (int e = threadIdx.x; e < experts && arrived; e += blockDim.x) {
    arrived = load_acquire_sys(reinterpret_cast<const uint64_t*>(l.heap + b.combine_flag(e))) >= seq;
  }
  if (!__syncthreads_and(arrived) && threadIdx.x < 32) {
    for (int e = threadIdx.x; e < experts; e += 32) {
      uint64_t v;
      if (ll_wait(l, p, b.combine_flag(e), seq, e / p->num_local_experts, &v, blockIdx.x == 0) != OK) {
        barrier_failed = 1;
        break;
      }
    }
  }
  __syncthreads();
  if (barrier_failed) return;  // block-uniform
  const int warps = gridDim.x * blockDim.x / 32, warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  // Work items are (token, slice of 256 channels), so a token's sum is spread over hidden / 256 warps instead of
  // one warp walking the whole row (a chain of memory round trips: 130 us at hidden 7168 on an H100). A warp takes
  // a contiguous range of items, mostly slices of one token, and reads a token's top-k and weights once.
  const int slices = (hidden + 255) / 256;
  const int64_t items = (int64_t)num_tokens * slices;
  const int64_t item_end = items * (warp + 1) / warps;
  int t = -1, first = -1;
  float w = 0.0f;
  for (int64_t item = items * warp / warps; item < item_end; ++item) {
    const int h = (int)(item % slices) * 256 + (int)lane * 8;
    if ((int)(item / slices) != t) {
      t = (int)(item / slices);
      // Lane k < top_k: entry k's weight, and the first k' <= k naming the same expert (-1 for -1 and bad
      // entries): the lanes holding one expert find each other with a match, whose lowest lane is the first
      // occurrence. Lanes without a valid entry match nobody (a key no expert has).
      int64_t key = -2 - (int64_t)lane;
      w = 0.0f;
      if (lane < (uint32_t)k_count) {
        const int64_t e = topk[(int64_t)t * k_count + lane];
        w = weights[(int64_t)t * k_count + lane];
        if (e >= 0 && e < experts) key = e;
      }
      const uint32_t same = __match_any_sync(0xffffffffu, (unsigned long long)key);
      first = key >= 0 ? __ffs(same) - 1 : -1;
    }
    // hidden is a multiple of 128, not of 256: in the last slice of an odd number of 128-channel groups only lanes
    // 0..15 have channels, but every lane runs the shuffles below.
    const bool mine = h < hidden;
    float acc[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[i] = 0.0f;
    // The rows of a batch of top-k entries are loaded before any is summed (memory latency overlaps); the sums
    // still go in increasing k, the documented order.
    constexpr int BATCH = 8;
    for (int k0 = 0; k0 < k_count; k0 += BATCH) {
      uint4 v[BATCH];
      float wk[BATCH];
      bool use[BATCH];
#pragma unroll
      for (int i = 0; i < BATCH; ++i) {
        const int k = k0 + i;
        const int f = __shfl_sync(0xffffffffu, first, k & 31);
        wk[i] = __shfl_sync(0xffffffffu, w, k & 31);
        use[i] = k < k_count && f >= 0 && mine;
        if (use[i]) v[i] = *reinterpret_cast<const uint4*>(l.heap + b.combine_recv(t, f) + 2ull * h);
      }
#pragma unroll
      for (int i = 0; i < BATCH; ++i) {
        if (!use[i]) continue;
        const uint32_t words[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          acc[2 * j] = __fmaf_rn(wk[i], ll_bf16_to_float((uint16_t)(words[j] & 0xffff)), acc[2 * j]);
          acc[2 * j + 1] = __fmaf_rn(wk[i], ll_bf16_to_float((uint16_t)(words[j] >> 16)), acc[2 * j + 1]);
        }
      }
    }
    if (mine) *reinterpret_cast<uint4*>(b.combined() + (int64_t)t * hidden + h) = pack_bf16x8(acc);
  }
}

// MoE expert parallelism for decoding (io.gda4j.moe, low latency): route, dispatch (send, receive), combine (send,
// receive). Each half is its own kernel, so the host can return after the sends and receive later (the
// send/receive split); a call without the split runs both halves in one kernel (gda4j_moe_ll_dispatch after the
// route, gda4j_moe_ll_combine). No kernel waits for the host and none reads host memory, so a CUDA graph can hold
// them.
// gda4j/moe/ll.cuh has the buffer layout and the counters; io.gda4j.moe.check.MoeLowLatencyReference is what they must
// produce, bit for bit.
// Two protocols: the counted one (this comment, and the kernels up to the tagged section) and the tagged one, the
// default for worlds whose pairs are all direct (the section at the end of this file; gda4j/moe/ll_tagged.cuh).
//
// Rows by transport (ll_params.cuh has the message, io.gda4j.moe.ll.LowLatencySizing the send order):
//  - p2p and self: the warps store the row, its scales and its source record straight into the expert's buffers;
//  - ibgda: the row is cast into one message (record | payload | scales) in this rank's send order and put with one
//    WQE per (token, expert); the expert's count follows as one SET;
//  - proxy (a batched pair: gda4j::prefers_few_puts, each trigger a driver call on the proxy thread): the messages
//    are written the same way, but nothing is pushed per row or per expert. A source's rows to one rank are
//    consecutive in its send order, behind a gap that holds the pair's count table, so the thread that completes the
//    last of that rank's expert counts pushes one PUT_SIGNAL of table and rows with the pair's batch word
//    (count_batched);
//  - a staged row lands as a message in its source's part of recv_msg; the receive half copies it apart into x,
//    scales and source records.
//  The combine returns the rows of (local expert, source) to the source's send rows, which are consecutive too: one
//  put (PUT_SIGNAL, with the expert's flag) per (local expert, ibgda source); for a batched source every expert
//  stages its rows in the source's send order and the last one puts them all with the pair's batch word. Where y is
//  the buffer's combine input and every pair is direct, nothing is returned: each source reads its rows there (the
//  pulling combine).
//
// Ordering (each transport's rules: docs/ARCHITECTURE.md, "Ordering per transport"):
//  - the count of an expert is SET after the rows: the block of a token, after every warp's stores (or puts) of its
//    rows, counts the rows done on this GPU (a block barrier, then each counting lane of warp 0 adds with a
//    GPU-scope release and acquire); the lane that completes a count has every block's rows for that expert in its
//    causality past, fences at system scope (cumulative: it carries them all) and then signals, so a receiver that
//    acquires the count sees every row. A zero count goes out first, with no fence: no row goes with it. A batched
//    pair adds one step: each expert's last writer arrives at its rank's counter (GPU-scope release and acquire),
//    and the one that completes it has all the rank's rows in its past; it fences and puts the table and the rows
//    in one put, the batch word behind them (a put_signal's signal follows its data on every transport);
//  - combine: the block of a local expert stores its rows (or writes them to its combine input), then (bar.sync)
//    warp 0 fences once and each of its lanes SETs the expert's flag at a direct rank; for another rank one warp per
//    source rank puts the staged rows with the flag (a batched source: arrives at the source's combine_done; the
//    last arrival fences and puts all the rows); a pulling combine only fences and SETs (the rows the sources will
//    read were written before the kernel).
//    The combine's receive half waits for every expert's flag, so it is a barrier over all ranks: a rank's next use
//    of a buffer follows every rank's receive of the previous one.
#include <gda4j/gda4j.cuh>
#include <gda4j/moe/ll.cuh>
#include <gda4j/moe/ll_tagged.cuh>

using namespace gda4j;
using namespace gda4j::moe;

// Warps per block of the token-parallel kernels (dispatch send, combine receive): ll_params.cuh, shared with Java.
constexpr int LL_TOKEN_WARPS = (int)MoeLowLatencyParamsDescriptor::TOKEN_WARPS;

// Shared words of the route kernel: a chunk's token bitmap and its slot base per expert (2 x 20 KiB).
constexpr int LL_ROUTE_SHARED_WORDS = 5120;

// send_base: the exclusive prefix sum of send_count over the experts, a block at a time (a warp scan, then one of
// the warps' sums); `carry` is the sum of the experts before the block's. Every thread of the block calls it, after
// a barrier behind the block's stores of send_count.
__device__ __forceinline__ void store_send_base(const LlBuffer& b) {
  const int experts = b.p->head.num_experts;
  const int32_t* count = b.send_count();
  __shared__ int32_t warp_base[32];
  __shared__ int32_t block_sum;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  int32_t carry = 0;
  for (int e0 = 0; e0 < experts; e0 += blockDim.x) {
    const int e = e0 + threadIdx.x;
    const int32_t v = e < experts ? count[e] : 0;
    int32_t incl = v;
    for (int o = 1; o < 32; o <<= 1) {
      const int32_t u = __shfl_up_sync(0xffffffffu, incl, o);
      if (lane >= o) incl += u;
    }
    if (lane == 31) warp_base[warp] = incl;
    __syncthreads();
    if (warp == 0) {
      const int32_t w = lane < warps ? warp_base[lane] : 0;
      int32_t wi = w;
      for (int o = 1; o < 32; o <<= 1) {
        const int32_t u = __shfl_up_sync(0xffffffffu, wi, o);
        if (lane >= o) wi += u;
      }
      if (lane < warps) warp_base[lane] = wi - w;
      if (lane == 31) block_sum = wi;
    }
    __syncthreads();
    if (e < experts) b.send_base()[e] = carry + warp_base[warp] + incl - v;
    carry += block_sum;
    __syncthreads();
  }
}

// Route of this rank's top-k (num_tokens x top_k, int64; -1 = none), on one block: raises seq[buf]; for each
// (token, k) the row's slot in its expert's range for this source (route_slot; -1 for -1, repeats and bad entries),
// rows per expert (send_count) and their first send row (send_base), both copies of send_done zeroed, and
// status[buf] = 0 or 1 + the first entry outside [-1, num_experts). Bad entries are then treated as -1, so every
// rank still completes the call (the host reports the status). The n-th token naming expert e gets slot n: a
// counting sort over chunks of 32 tokens, where a chunk's tokens naming e form a 32-bit mask, a token's slot is the
// popcount of the masks of earlier chunks plus that of the earlier bits of its own. Every step is one pass over the
// entries or the experts (a warp per expert scanning the tokens in order took 47 us at 128 tokens of top-8 on an
// H100). The dispatch routes its tokens itself where it has a block per token (route_block); this kernel is for more.
// It zeroes both copies of send_done, since a call routed by the dispatch zeroes only the copy of the other parity.
extern "C" __global__ void __launch_bounds__(1024) gda4j_moe_ll_route(const __grid_constant__ LlParams params, int buf,
                                                                       const int64_t* topk, int num_tokens) {
  const LlParams* p = &params;
  if (p->head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  __shared__ unsigned long long bad;
  // mask[c][e - e0]: the tokens of chunk c (of this group) naming expert e; base[c][e - e0]: the slot of the chunk's
  // first such token. A group is as many chunks as fit beside a window of experts; more experts than fit in one
  // window (over 2560) take several windows.
  __shared__ uint32_t mask[LL_ROUTE_SHARED_WORDS];
  __shared__ int32_t base[LL_ROUTE_SHARED_WORDS];
  const LlBuffer b{p, buf};
  const int k_count = p->head.top_k, experts = p->head.num_experts;
  const int entries = num_tokens * k_count;
  if (threadIdx.x == 0) {
    bad = ~0ull;
    *b.seq() += 1;
  }
  int32_t* slot = b.route_slot();
  int32_t* count = b.send_count();
  for (int i = threadIdx.x; i < experts + p->head.nranks; i += blockDim.x) {
    b.send_done(0)[i] = 0;
    b.send_done(1)[i] = 0;
    if (i < experts) count[i] = 0;
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
  store_send_base(b);
  if (threadIdx.x == 0) *b.status() = bad == ~0ull ? 0 : bad + 1;
}

// A named namespace, not an anonymous one (see moe_ring.cu: PTX free of path-dependent names).
namespace moe_ll_kernels {

// A batched pair (gda4j::prefers_few_puts, the proxy): the expert's entry in the table this rank fills for rank r
// (its first send row and its rows), then an arrival at r's counter in `arrivals`. The thread whose arrival completes
// it has every expert of r counted, so every row to r in its past (as a count's last writer has its expert's rows),
// writes the table as running sums into the gap before r's rows in the send order and sends the pair's one trigger:
// a PUT_SIGNAL of the table and the rows behind it into the head of this rank's part at r, with the batch word. (The
// gap's place is only known once the table is whole: the first send row to r is the first row of r's first expert
// with rows. With no row to r, the table goes alone from where it was filled.) One PUT_SIGNAL per expert instead took
// 1.1 ms at 128 tokens (2 H100s, 128 local experts per rank), each trigger a driver call on the proxy thread; the rows
// in one put and the table in a second cost every call one more copy queued there (about 4 us on an H200).
__device__ int count_batched(const DeviceView* view, const LlBuffer& b, const Peer& peer, int r, int le,
                             uint64_t seq, int32_t rows, int32_t first_send_row, int32_t* arrivals) {
  const LlParams* p = b.p;
  const int local = p->head.num_local_experts, me = p->head.rank;
  char* heap = local_of(view).heap;
  uint64_t* filled = reinterpret_cast<uint64_t*>(heap + b.table_filled(r));
  filled[le] = (uint64_t)(uint32_t)first_send_row << 32 | (uint32_t)rows;
  // Release of the entry (and, cumulative, of the rows this thread's send_done add acquired), acquire of the others.
  if (atom_add_acq_rel_gpu(arrivals + r, 1) != local - 1) return OK;
  uint32_t end = 0;
  int32_t first = -1;
  for (int e = 0; e < local; ++e) {
    const uint64_t v = filled[e];
    if ((uint32_t)v != 0 && first < 0) first = (int32_t)(v >> 32);
    end += (uint32_t)v;
  }
  uint64_t* table = first < 0 ? filled : reinterpret_cast<uint64_t*>(heap + b.table_to_rank(r, first));
  uint32_t sum = 0;
  for (int e = 0; e < local; ++e) {
    sum += (uint32_t)filled[e];
    table[e] = sum;
  }
  // Every block's rows (cumulative) and the table visible system-wide before the copy engine reads them.
  __threadfence_system();
  const uint64_t bytes = first < 0 ? (uint64_t)local * 8 : (b.table_msgs() + end) * p->msg_bytes;
  const uint64_t from = (uint64_t)(reinterpret_cast<char*>(table) - heap);
  return put_signal(peer, b.table_from_source(me), from, bytes, b.dispatch_batch(me), SIGNAL_SET, seq << 32 | end);
}

// One thread: the count of `expert` from this rank, once its rows are out; `done` is the call's send_done copy.
// `gathered`: the rows wait in the expert's rank's token stage (the count says so: LL_GATHERED_ROWS).
__device__ __forceinline__ int signal_count(const DeviceView* view, const LlBuffer& b, int expert, uint64_t seq,
                                            int32_t rows, int32_t first_send_row, int32_t* done,
                                            bool gathered = false) {
  const LlParams* p = b.p;
  const int r = expert / p->head.num_local_experts, le = expert % p->head.num_local_experts;
  const Peer peer = peer_of(view, r);
  if (prefers_few_puts(peer)) {
    return count_batched(view, b, peer, r, le, seq, rows, first_send_row, done + p->head.num_experts);
  }
  // A count of rows: this thread's send_done add acquired every add before it, each a release of its block's rows
  // (and puts); this fence, cumulative, makes all of them visible system-wide before the signal. For a direct peer it
  // is the fence that fence(peer) would be (so that call is left out); an ibgda signal claims its queue slot with
  // another atomic, which must come after those warps' claims on the same QP: the expert's channel, as its rows (a
  // peer may have several QPs). A zero count orders nothing: no row goes with it.
  if (rows > 0) __threadfence_system();
  return signal(with_channel(peer, le), b.dispatch_count(le, p->head.rank), SIGNAL_SET,
                seq << 32 | (uint32_t)rows | (gathered ? LL_GATHERED_ROWS : 0u));
}

// The route of one block's token, computed by the block itself (the fused route; see route_block).
struct BlockRoute {
  int32_t expert[32];     // entry k's expert; -1 for -1, a repeat or a bad entry
  int32_t slot[32];       // its slot in the expert's range for this source
  int32_t send_base[32];  // the expert's first send row
  int32_t rows[32];       // this rank's rows to the expert
  uint64_t seq;           // the call's sequence number
  unsigned long long bad; // the grid's last block: the first entry outside [-1, num_experts), or ~0
};

// The fused route: what gda4j_moe_ll_route computes, by each block of the dispatch for its own token, so that a
// dispatch whose (token, part) items each have a block of their own needs no route kernel before it. In one run
// (2x H100, DeepEP's shape, FP8) 1 token went from 0.022 to 0.021 ms and 32 from 0.024 to 0.023; 128 stayed at
// 0.035, where each block's pass over every entry costs what the route kernel did (a prefetch of the block's row
// during the pass gained nothing). Every block reads every entry (L1/L2 hits), counts the rows per expert in
// `hist` (shared, num_experts words: the zero counts and the rows of its experts) and, for its own token's experts,
// the earlier tokens naming them (the slot: the n-th token naming e gets slot n, as in the route kernel) and the rows
// of the experts below them (the send row). That is all the block's sends need; what the route kernel also leaves
// for later calls (send_count, send_base, status[buf], route_slot) and the sequence number's raise wait until the
// block's sends are out (route_block_finish). Every thread of the block calls it.
__device__ void route_block(const LlBuffer& b, const int64_t* topk, int num_tokens, int parts, BlockRoute* r,
                            int32_t* hist) {
  const LlParams* p = b.p;
  const int k_count = p->head.top_k, experts = p->head.num_experts;
  const int entries = num_tokens * k_count;
  const uint32_t lane = lane_id();
  const int warp = threadIdx.x >> 5;
  const bool has_item = blockIdx.x < (unsigned)(num_tokens * parts);
  const int t = has_item ? (int)blockIdx.x / parts : -1;
  if (threadIdx.x == 0) {
    // Raised only once every block has read it: see route_block_finish.
    r->seq = *reinterpret_cast<volatile uint64_t*>(b.seq()) + 1;
    r->bad = ~0ull;
  }
  for (int e = threadIdx.x; e < experts; e += blockDim.x) hist[e] = 0;
  if (warp == 0 && lane < (uint32_t)k_count) {
    // The token's own entries: a repeat matches an earlier lane with the same value.
    const int64_t e = has_item ? topk[(int64_t)t * k_count + lane] : -1;
    const bool valid = e >= 0 && e < experts;
    const uint32_t same = __match_any_sync(__activemask(), valid ? e : -2 - (int64_t)lane);
    r->expert[lane] = valid && (same & ((1u << lane) - 1)) == 0 ? (int32_t)e : -1;
    r->slot[lane] = 0;
    r->send_base[lane] = 0;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < entries; i += blockDim.x) {
    const int64_t e = topk[i];
    if (e < -1 || e >= experts) {
      if (blockIdx.x == gridDim.x - 1) atomicMin(&r->bad, (unsigned long long)i);
      continue;
    }
    if (e < 0) continue;
    const int row = i - i % k_count;
    bool first = true;
    for (int j = row; j < i && first; ++j) first = topk[j] != e;
    if (!first) continue;
    atomicAdd(&hist[e], 1);
    if (row / k_count < t) {
      for (int j = 0; j < k_count; ++j) {
        if (r->expert[j] == (int32_t)e) atomicAdd(&r->slot[j], 1);
      }
    }
  }
  __syncthreads();
  // Rows of the experts below each of the token's experts: a pass over hist per entry, summed over the block.
  for (int j = 0; j < k_count; ++j) {
    const int32_t ej = r->expert[j];
    if (ej < 0) continue;  // block-uniform
    int32_t below = 0;
    for (int e = threadIdx.x; e < ej; e += blockDim.x) below += hist[e];
    for (int o = 16; o > 0; o >>= 1) below += __shfl_xor_sync(0xffffffffu, below, o);
    if (lane == 0 && below != 0) atomicAdd(&r->send_base[j], below);
  }
  if (warp == 0 && lane < (uint32_t)k_count && r->expert[lane] >= 0) r->rows[lane] = hist[r->expert[lane]];
  __syncthreads();
}

// The rest of the fused route, once the block's sends are out: it was on the way of the first rows (a one-token
// dispatch's counts arrived about 2 us later with it in front; 2 H200s). The grid's last block stores what the
// route kernel leaves for the later calls (send_count, send_base, status[buf]; the last block, as it is the one
// without a token at few tokens), part 0 of a token its route_slot entries, and every block zeroes its share of the
// other send_done copy: the call's copy is the one of its sequence number's parity, zeroed by the call before on
// this buffer; this call zeroes the other (that call's, done before this kernel started).
// The sequence number: every block read seq[buf] in route_block and now arrives at a counter; the last to arrive
// has every block's read behind it, so it may raise seq[buf] and reset the counter. Every thread of the block calls
// it, on every path (a dispatch that failed must still raise seq[buf]: the next call on the buffer expects it).
__device__ void route_block_finish(const LlBuffer& b, int num_tokens, int parts, const BlockRoute* r,
                                   const int32_t* hist) {
  const LlParams* p = b.p;
  const int k_count = p->head.top_k, experts = p->head.num_experts;
  const uint32_t lane = lane_id();
  const int warp = threadIdx.x >> 5;
  int32_t* other = b.send_done(r->seq ^ 1);
  for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < experts + p->head.nranks; e += gridDim.x * blockDim.x) {
    other[e] = 0;
  }
  if (blockIdx.x < (unsigned)(num_tokens * parts) && (int)blockIdx.x % parts == 0 && warp == 0 &&
      lane < (uint32_t)k_count) {
    const int t = (int)blockIdx.x / parts;
    b.route_slot()[(int64_t)t * k_count + lane] = r->expert[lane] >= 0 ? r->slot[lane] : -1;
  }
  if (blockIdx.x == gridDim.x - 1) {  // block-uniform
    for (int e = threadIdx.x; e < experts; e += blockDim.x) b.send_count()[e] = hist[e];
    __syncthreads();
    store_send_base(b);  // it reads send_count, stored above before the barrier
    if (threadIdx.x == 0) *b.status() = r->bad == ~0ull ? 0 : r->bad + 1;
  }
  // Release: this block's read of seq[buf] (route_block, before a barrier) is ordered before the arrival.
  if (threadIdx.x == 0 && atom_add_acq_rel_gpu(b.route_arrivals(), 1) == (int32_t)gridDim.x - 1) {
    *b.route_arrivals() = 0;
    *b.seq() = r->seq;
  }
}

// Channels of a row per lane in the dispatch send: 32 bytes of BF16 in (two 16-byte loads), 16 bytes of FP8 codes
// (or the 32 BF16 bytes) out, so a warp moves a 512-channel chunk per step and eight lanes share a scale block.
// With 4 channels per lane the stores of 4 bytes were most of the kernel's instructions (1 token took 19 us on an
// H100, and 128 tokens about as long).
constexpr int LL_CHUNK = (int)MoeLowLatencyParamsDescriptor::SEND_CHUNK;
constexpr int LL_LANE_CHANNELS = LL_CHUNK / 32;
// Chunks a warp holds in registers at once: hidden up to 8 warps x 4 x 512 = 16384 is one round of loads.
constexpr int LL_SEND_BATCH = 4;

// Lane `lane`'s 16 channels (32 bytes of BF16) of chunks c0, c0 + stride, ... (LL_SEND_BATCH of them) of `row`,
// where the chunk has them. x is the caller's input, read-only while the kernel runs: the non-coherent path (__ldg).
__device__ __forceinline__ void load_lane_chunks(const uint16_t* row, int c0, int stride, int hidden, uint32_t lane,
                                                 uint4 (&lo)[LL_SEND_BATCH], uint4 (&hi)[LL_SEND_BATCH]) {
#pragma unroll
  for (int i = 0; i < LL_SEND_BATCH; ++i) {
    const int ch = (c0 + i * stride) * LL_CHUNK + (int)lane * LL_LANE_CHANNELS;
    if (ch < hidden) {
      lo[i] = __ldg(reinterpret_cast<const uint4*>(row + ch));
      hi[i] = __ldg(reinterpret_cast<const uint4*>(row + ch) + 1);
    }
  }
}

// The FP8 cast of the chunks load_lane_chunks loaded (lane_quantize16 each). Every lane of the warp calls it.
__device__ __forceinline__ void quantize_lane_chunks(int c0, int stride, int chunks, bool pow2,
                                                     const uint4 (&lo)[LL_SEND_BATCH], const uint4 (&hi)[LL_SEND_BATCH],
                                                     uint4 (&q)[LL_SEND_BATCH], float (&scale)[LL_SEND_BATCH]) {
#pragma unroll
  for (int i = 0; i < LL_SEND_BATCH; ++i) {
    if (c0 + i * stride < chunks) q[i] = lane_quantize16(lo[i], hi[i], pow2, &scale[i]);  // warp-uniform
  }
}

// The chunks of a round (from c0, stride apart: load_lane_chunks), this lane's share, stored plain into the row at
// `dx`: the FP8 codes q and the block scales into `ds` (lanes 0, 8, 16, 24), or the BF16 channels lo, hi.
__device__ __forceinline__ void store_lane_chunks(char* dx, float* ds, int c0, int stride, int hidden, uint32_t lane,
                                                  bool fp8, const uint4 (&q)[LL_SEND_BATCH],
                                                  const float (&scale)[LL_SEND_BATCH],
                                                  const uint4 (&lo)[LL_SEND_BATCH], const uint4 (&hi)[LL_SEND_BATCH]) {
#pragma unroll
  for (int i = 0; i < LL_SEND_BATCH; ++i) {
    const int ch = (c0 + i * stride) * LL_CHUNK + (int)lane * LL_LANE_CHANNELS;
    if (ch >= hidden) continue;
    if (fp8) {
      *reinterpret_cast<uint4*>(dx + ch) = q[i];
      if ((lane & 7) == 0) ds[ch / LL_SCALE_BLOCK] = scale[i];
    } else {
      reinterpret_cast<uint4*>(dx + 2 * ch)[0] = lo[i];
      reinterpret_cast<uint4*>(dx + 2 * ch)[1] = hi[i];
    }
  }
}

// One block: part `part` of `parts` of token t, to each distinct expert of its top-k. The parts' warps share the
// row's 512-channel chunks (warp w of part q takes chunks q x warps + w, then every parts x warps-th after it) and
// store them to every destination: the expert's buffers at a p2p/self peer, or the entry's message in this rank's
// send order for a staged (proxy/ibgda) one. With one part, warp j then puts the ibgda messages j, j + 8, ... in
// parallel (ibgda puts a message once whole, so the host gives a rank with ibgda peers one part per token).
// Where the call gathers (`gather`: the host's choice per call, io.gda4j.moe.ll.LowLatencySizing.gathersRows) the
// token's row goes to another p2p rank once, into that rank's token stage, stored by the lowest of the token's
// entries for that rank; every entry still writes its source record into its expert's slot there, and the receive
// half copies the row out by it (at 2 ranks, top-8, a quarter of the bytes cross NVLink).
// `failed` is the block's shared error flag. Every thread of the block calls it.
// What the time goes to at few tokens is chains of dependent instructions and memory round trips, not bandwidth: so
// a token may take several blocks (shorter chains per warp), the loads that depend on nothing (the row, the entry's
// route) are issued first, and each entry's expert data (send row, count, peer) is loaded once, by its lane.
__device__ int send_token(const DeviceView* view, const LlBuffer& b, const uint16_t* x, const int64_t* topk, int t,
                          int part, int parts, uint64_t seq, const BlockRoute* fused, bool gather,
                          int32_t* send_done, int* failed) {
  const LlParams* p = b.p;
  const uint32_t lane = lane_id();
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int k_count = p->head.top_k, local = p->head.num_local_experts, me = p->head.rank, hidden = p->head.hidden;
  const bool fp8 = p->head.dtype == LL_DTYPE_FP8_E4M3;
  const bool pow2 = p->power_of_two_scales != 0;
  const Local l = local_of(view);
  const uint16_t* row = x + (int64_t)t * hidden;
  const int chunks = (hidden + LL_CHUNK - 1) / LL_CHUNK;
  // This warp's chunks in rounds of LL_SEND_BATCH: chunk i of the round from c0 is c0 + i * stride. hidden is a
  // multiple of 128, so a scale block's eight lanes all have channels or none do.
  const int first = part * warps + warp, stride = parts * warps;
  uint4 lo[LL_SEND_BATCH], hi[LL_SEND_BATCH];
  load_lane_chunks(row, first, stride, hidden, lane, lo, hi);
  // Lane k < top_k of every warp: its entry's expert, slot, send row, the expert's row count from this rank, and
  // where the row goes: x, scales and source record at a p2p/self peer, or the parts of its message here. Each
  // warp loads them itself (L1 hits after the first) rather than waiting at a block barrier for one warp to share
  // them. Computed before the row loop: its stores go through char pointers that may alias the route's outputs, so
  // a load of those inside it would be a fresh memory load after each store.
  int expert = -1, slot = -1, send_row = -1, rows_to_expert = 0;
  bool put_each = false;  // a staged peer whose puts are cheap (ibgda: a WQE the GPU writes): one put per message
  bool gathered = false;  // the row goes to the expert's rank once, into its token stage
  char* dst_x = nullptr;
  float* dst_scales = nullptr;
  int4* dst_src = nullptr;
  if (lane < (uint32_t)k_count) {
    if (fused != nullptr) {
      if (fused->expert[lane] >= 0) {
        expert = fused->expert[lane];
        slot = fused->slot[lane];
        send_row = fused->send_base[lane] + slot;
        rows_to_expert = fused->rows[lane];
      }
    } else {
      slot = b.route_slot()[(int64_t)t * k_count + lane];
      if (slot >= 0) {
        expert = (int)topk[(int64_t)t * k_count + lane];
        send_row = b.send_base()[expert] + slot;
        rows_to_expert = b.send_count()[expert];
      }
    }
    if (slot >= 0) {
      const int dest = expert / local;
      const Peer peer = peer_of(view, dest);
      put_each = !is_direct(peer) && !prefers_few_puts(peer);
      if (is_direct(peer)) {
        const uint64_t r = b.row(expert % local, me * p->max_tokens + slot);
        gathered = gather && dest != me;
        if (gathered) {
          dst_x = peer.heap + b.token_stage(me, t);
          dst_scales = reinterpret_cast<float*>(dst_x + p->payload_bytes);
        } else {
          dst_x = peer.heap + b.recv_x(r);
          dst_scales = reinterpret_cast<float*>(peer.heap + b.recv_scales(r));
        }
        dst_src = reinterpret_cast<int4*>(peer.heap + b.recv_src(r));
      } else {
        char* msg = l.heap + b.send_msg(send_row, dest);
        dst_src = reinterpret_cast<int4*>(msg);
        dst_x = msg + LL_MSG_HEADER_BYTES;
        dst_scales = reinterpret_cast<float*>(msg + LL_MSG_HEADER_BYTES + p->payload_bytes);
      }
    }
  }
  // A gathered row is stored by the lowest of the token's entries for its rank (the key of other lanes is unique).
  const uint32_t same_rank = __match_any_sync(0xffffffffu, gathered ? expert / local : -1 - (int)lane);
  const uint32_t dests = __ballot_sync(0xffffffffu, slot >= 0 && (!gathered || __ffs(same_rank) - 1 == (int)lane));
  const uint32_t put_dests = __ballot_sync(0xffffffffu, slot >= 0 && put_each);
  // A round: its chunks cast (FP8), then stored destination by destination, so a destination's addresses are
  // shuffled once per round rather than once per chunk.
  for (int c0 = first; c0 < chunks; c0 += LL_SEND_BATCH * stride) {
    if (c0 != first) load_lane_chunks(row, c0, stride, hidden, lane, lo, hi);
    uint4 q[LL_SEND_BATCH];
    float scale[LL_SEND_BATCH];
    if (fp8) quantize_lane_chunks(c0, stride, chunks, pow2, lo, hi, q, scale);
    for (uint32_t m = dests; m != 0; m &= m - 1) {
      const int d = __ffs(m) - 1;
      char* dx = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(dst_x), d));
      float* ds = reinterpret_cast<float*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(dst_scales), d));
      store_lane_chunks(dx, ds, c0, stride, hidden, lane, fp8, q, scale, lo, hi);
    }
  }
  // Source records: (source rank, token, top-k slot, send row), written by part 0's warp 0, the entry's lane.
  if (part == 0 && warp == 0 && slot >= 0) *dst_src = make_int4(me, t, (int)lane, send_row);
  // Every warp's stores of the row are done before any warp puts it or warp 0 counts it.
  __syncthreads();
  if (put_dests != 0) {  // block-uniform: every warp holds the same entries
    // The messages were stored by every warp (ordered before this point by the barrier): visible system-wide before
    // the NIC reads them. Cumulative: this fence orders what the barrier showed this thread, not only its own stores.
    __threadfence_system();
    __syncwarp();
    int st = OK, j = 0;
    for (uint32_t m = put_dests; m != 0 && st == OK; m &= m - 1, ++j) {
      if (j % warps != warp) continue;
      const int d = __ffs(m) - 1;
      const int e = __shfl_sync(0xffffffffu, expert, d);
      const int s = __shfl_sync(0xffffffffu, slot, d);
      const int sr = __shfl_sync(0xffffffffu, send_row, d);
      // On the QP of the expert's channel, as its count (signal_count): the count cannot overtake the rows.
      const Peer peer = with_channel(peer_of(view, e / local), e % local);
      st = put_warp(peer, b.recv_msg(me, (uint64_t)(e % local) * p->max_tokens + s), b.send_msg(sr, e / local),
                    p->msg_bytes);
      st = __shfl_sync(0xffffffffu, st, 0);
    }
    if (st != OK && lane == 0) *failed = 1;
    __syncthreads();
  }
  // Count the token's part done: warp 0's lane of each entry, all at once (one after the other, thread 0's chain
  // of returning atomics was a large part of the kernel). Each add is a GPU-scope release of every warp's direct
  // stores and puts of the part (shown to the lane by the barrier above) and an acquire of the adds before it, so
  // the lane that brings an expert's count to parts x rows has every block's rows for that expert in its past; its
  // system fence in signal_count publishes them (ordering: see the file comment). A system fence before every add
  // instead put one more (about 1.6 us on an H100) in each (token, part)'s chain.
  if (warp == 0 && slot >= 0 && !*failed) {
    const int32_t done = atom_add_acq_rel_gpu(send_done + expert, 1) + 1;
    if (done == parts * rows_to_expert &&
        signal_count(view, b, expert, seq, rows_to_expert, send_row - slot, send_done, gathered) != OK) {
      *failed = 1;
    }
  }
  // Warp 0's verdict reaches every thread before the next token (or the kernel's return) reuses `failed`.
  __syncthreads();
  return *failed ? ERR_ABORTED : OK;
}

}  // namespace moe_ll_kernels
using namespace moe_ll_kernels;

// Dispatch, send half. Grid: max(1, num_tokens x parts) blocks (or fewer: they loop) of 32 * LL_TOKEN_WARPS
// threads; after gda4j_moe_ll_route on the same stream. Block b sends the (token, part) items b, b + gridDim.x, ...
// (item i: token i / parts, part i % parts; send_token); `parts` is 1 where this rank has ibgda peers. First the
// experts this rank sends no row get their zero count from the threads of the grid's last blocks.
// The params come by value (kernel parameter memory, like every kernel of this file): a field costs no memory round
// trip, where a params block in device memory put one at the head of every chain of loads.
namespace moe_ll_kernels {

// The send half's work, by every block of the grid (every thread calls it); OK, or ERR_ABORTED once a put failed.
// With `fused` (a block per (token, part) item at most, and num_experts words of dynamic shared memory) the blocks
// route their tokens themselves (route_block) and no route kernel ran before. *seq_out: the call's sequence number.
__device__ __forceinline__ int send_items(const DeviceView* view, const LlParams* p, int buf, const uint16_t* x,
                                          const int64_t* topk, int num_tokens, int parts, int fused, int gather,
                                          uint64_t* seq_out) {
  __shared__ int failed;
  __shared__ BlockRoute route;
  extern __shared__ int32_t hist[];
  const LlBuffer b{p, buf};
  if (threadIdx.x == 0) failed = 0;
  if (fused) route_block(b, topk, num_tokens, parts, &route, hist);
  __syncthreads();
  const uint64_t seq = fused ? route.seq : *b.seq();
  *seq_out = seq;
  int32_t* send_done = b.send_done(seq);
  // The batched combine's arrival counters start from zero at each call (the combine of the call before on this
  // buffer is done: it came before this kernel on the stream).
  if (blockIdx.x == 0 && threadIdx.x < (unsigned)p->head.nranks) b.combine_done()[threadIdx.x] = 0;
  // Zero counts first: they wait for no row (so no fence); sent last they were a load, a fence and a store at the
  // end of the kernel's chain. With the GPU-scope adds of send_token, a one-token dispatch went from 0.027 to 0.024
  // ms (2 ranks, H100s). They are the work of the grid's last blocks, which at few tokens have no token to send
  // (from block 0 they held its token back by about 0.8 us).
  const int threads = gridDim.x * blockDim.x;
  for (int e = (gridDim.x - 1 - blockIdx.x) * blockDim.x + threadIdx.x; e < p->head.num_experts; e += threads) {
    const int32_t rows = fused ? hist[e] : b.send_count()[e];
    if (rows == 0 && signal_count(view, b, e, seq, 0, 0, send_done) != OK) break;
  }
  const int64_t items = (int64_t)num_tokens * parts;
  int st = OK;
  for (int64_t i = blockIdx.x; i < items && st == OK; i += gridDim.x) {
    st = send_token(view, b, x, topk, (int)(i / parts), (int)(i % parts), parts, seq, fused ? &route : nullptr,
                    gather != 0 && p->stage_row_bytes != 0, send_done, &failed);
  }
  if (fused) route_block_finish(b, num_tokens, parts, &route, hist);
  return st == OK ? OK : ERR_ABORTED;
}

}  // namespace moe_ll_kernels

extern "C" __global__ void __launch_bounds__(32 * LL_TOKEN_WARPS) gda4j_moe_ll_dispatch_send(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf, const uint16_t* x, const int64_t* topk,
    int num_tokens, int parts, int fused, int gather) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  uint64_t seq;
  send_items(view, &params, buf, x, topk, num_tokens, parts, fused, gather, &seq);
}

// Dispatch, receive half. Grid: blocks of 256 threads, at most one per local expert (block b takes experts b,
// b + gridDim.x, ...). For each of its experts, warp 0 waits, lane s for source s, until source s's count of the
// call arrived and writes recv_count_src[le][s] and recv_count[le]; then the block copies the rows of staged
// (proxy/ibgda) sources apart from their landing messages into x, scales and source records.
namespace moe_ll_kernels {

// The receive half's work, by every block of the grid (every thread calls it).
__device__ __forceinline__ void receive_counts(const DeviceView* view, const LlParams* p, int buf, uint64_t seq) {
  __shared__ int32_t rows_from[MAX_RANKS];
  __shared__ int32_t first_msg[MAX_RANKS];  // a staged source's first message of this expert in its part of recv_msg
  __shared__ int32_t gathered_from[MAX_RANKS];  // the source's rows wait in this rank's token stage
  __shared__ int failed;
  const LlBuffer b{p, buf};
  const uint32_t lane = lane_id();
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5, n = p->head.nranks;
  const Local l = local_of(view);
  const uint64_t payload = p->payload_bytes, scales = p->scales_per_row;
  for (int le = blockIdx.x; le < p->head.num_local_experts; le += gridDim.x) {
    if (warp == 0) {
      int32_t rows = 0;
      int bad = 0;
      bool gathered = false;
      if (lane < (uint32_t)n) {
        uint64_t v = 0;
        int32_t first = le * p->max_tokens;
        if (prefers_few_puts(peer_of(view, lane))) {
          // A batched source: its one word for all experts (the wait counted once, by the first expert's block),
          // then this expert's rows and where they start from the running sums of its table.
          bad = ll_wait(l, p, b.dispatch_batch(lane), seq << 32, lane, &v, le == 0) != OK;
          if (!bad) {
            const uint64_t* table = reinterpret_cast<const uint64_t*>(l.heap + b.table_from_source(lane));
            first = le > 0 ? (int32_t)table[le - 1] : 0;
            rows = (int32_t)table[le] - first;
            b.recv_offset_src()[le * n + lane] = first;
          }
        } else {
          bad = ll_wait(l, p, b.dispatch_count(le, lane), seq << 32, lane, &v) != OK;
          rows = bad ? 0 : (int32_t)((uint32_t)v & ~LL_GATHERED_ROWS);
          gathered = !bad && ((uint32_t)v & LL_GATHERED_ROWS) != 0;
        }
        b.recv_count_src()[le * n + lane] = rows;
        rows_from[lane] = rows;
        first_msg[lane] = first;
        gathered_from[lane] = gathered;
      }
      bad = __any_sync(0xffffffffu, bad);
      for (int o = 16; o > 0; o >>= 1) rows += __shfl_xor_sync(0xffffffffu, rows, o);
      if (lane == 0) {
        if (!bad) b.recv_count()[le] = rows;
        failed = bad;
      }
    }
    // The barrier orders warp 0's acquires of the counts before every warp's loads of the landed messages.
    __syncthreads();
    if (failed) return;  // block-uniform
    if (p->stage_row_bytes != 0) {
      // Rows a p2p source gathered (its count says so): each slot's source record names its token, whose row the
      // source stored once into this rank's token stage before the count (the count's fence covers it).
      for (int s = 0; s < n; ++s) {
        if (!gathered_from[s]) continue;
        for (int j = warp; j < rows_from[s]; j += warps) {
          const uint64_t r = b.row(le, s * p->max_tokens + j);
          const int t = reinterpret_cast<const int32_t*>(l.heap + b.recv_src(r))[1];
          if (t < 0 || t >= p->max_tokens) continue;  // no sender writes such a record: read nothing outside the stage
          const char* row = l.heap + b.token_stage(s, t);
          warp_copy16(l.heap + b.recv_x(r), row, payload, lane);
          warp_copy4(l.heap + b.recv_scales(r), row + payload, scales, lane);
        }
      }
    }
    if (p->msg_bytes != 0) {
      for (int s = 0; s < n; ++s) {
        if (is_direct(peer_of(view, s))) continue;
        for (int j = warp; j < rows_from[s]; j += warps) {
          const uint64_t r = b.row(le, s * p->max_tokens + j);
          const char* msg = l.heap + b.recv_msg(s, (uint64_t)first_msg[s] + j);
          if (lane == 0) *reinterpret_cast<int4*>(l.heap + b.recv_src(r)) = *reinterpret_cast<const int4*>(msg);
          warp_copy16(l.heap + b.recv_x(r), msg + LL_MSG_HEADER_BYTES, payload, lane);
          warp_copy4(l.heap + b.recv_scales(r), msg + LL_MSG_HEADER_BYTES + payload, scales, lane);
        }
      }
    }
    // rows_from and failed are rewritten for the next expert only after every warp is done with them.
    __syncthreads();
  }
}

}  // namespace moe_ll_kernels

extern "C" __global__ void __launch_bounds__(256) gda4j_moe_ll_dispatch_recv(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  receive_counts(view, &params, buf, *LlBuffer{&params, buf}.seq());
}

// Dispatch without the split, after gda4j_moe_ll_route: both halves in one kernel, so no launch sits between the
// last row out and the wait for the counts. Grid: blocks of 32 * LL_TOKEN_WARPS threads, all resident at once on
// the rank's share of its GPU (the host sizes it with the occupancy of this kernel): the counts the receive part
// waits for include this rank's own, which other blocks of the grid send.
extern "C" __global__ void __launch_bounds__(32 * LL_TOKEN_WARPS) gda4j_moe_ll_dispatch(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf, const uint16_t* x, const int64_t* topk,
    int num_tokens, int parts, int fused, int gather) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  uint64_t seq;
  if (send_items(view, &params, buf, x, topk, num_tokens, parts, fused, gather, &seq) != OK) return;
  // The sequence number from the send part: with the fused route, seq[buf] may already be raised, or not yet.
  receive_counts(view, &params, buf, seq);
}

// Combine, send half. Grid: num_local_experts blocks of 256 threads; after the dispatch's receive half. Block le
// returns each received row of its expert (y: [num_local_experts][slots][hidden] BF16, the dispatch's layout) to its
// source, at the send row its source record names in the source's combine buffer: p2p/self sources by stores, staged
// ones through this rank's combine input (a copy, unless y is that section already). Then warp s % 8 sets the
// expert's flag at rank s: a fence and a SET, or for a staged source one PUT_SIGNAL of all its rows (consecutive at
// both ends) with the flag. With `pull` (y is the combine input and every pair is direct) nothing is copied: the
// flag tells each source that the rows it will read are final. A flag is SET to seq << 1 | pull, so a receiver also
// learns which combine the expert's rank ran (the two kinds cannot mix: see gda4j_moe_ll_combine_recv).
// 256 threads, not 1024: a 1024-thread block needs a whole SM's registers, and where ranks share a GPU the other
// ranks' receive blocks, spinning until this kernel's flags arrive, may hold a share of every SM.
namespace moe_ll_kernels {

// The combine's rows for batched source s, once every local expert staged its own (combine_stage, in the source's
// send order from its first row to this rank): one PUT_SIGNAL of them all to the source's send rows, with the batch
// word in place of the experts' flags. One thread, whose arrival at combine_done completed (the release of every
// block's staged rows in its past).
__device__ void return_batched_rows(const DeviceView* view, const LlBuffer& b, const Peer& peer, int s,
                                    uint64_t value) {
  const LlParams* p = b.p;
  const int n = p->head.nranks, last = p->head.num_local_experts - 1;
  const uint64_t word = b.combine_batch(p->head.rank);
  const int32_t rows = b.recv_offset_src()[last * n + s] + b.recv_count_src()[last * n + s];
  if (rows == 0) {
    signal(peer, word, SIGNAL_SET, value);
    return;
  }
  // The source's first send row to this rank: the send row of the first expert's first row, less its offset.
  const Local l = local_of(view);
  int le = 0;
  while (b.recv_count_src()[le * n + s] == 0) ++le;
  const uint64_t r0 = b.row(le, s * p->max_tokens);
  const int32_t first = reinterpret_cast<const int32_t*>(l.heap + b.recv_src(r0))[3] - b.recv_offset_src()[le * n + s];
  // The staged rows visible system-wide before the copy engine reads them (cumulative: every block's).
  __threadfence_system();
  put_signal(peer, b.combine_recv(first), b.combine_stage(s, 0), (uint64_t)rows * 2ull * p->head.hidden, word,
             SIGNAL_SET, value);
}

// The send half's work for local expert `le`, by one block (every thread calls it; it ends with a barrier, so a
// block may call it again for another expert).
__device__ __forceinline__ void return_expert_rows(const DeviceView* view, const LlParams* p, int buf,
                                                   const uint16_t* y, int pull, int le) {
  __shared__ int32_t first_row[MAX_RANKS + 1];
  const LlBuffer b{p, buf};
  const int n = p->head.nranks, hidden = p->head.hidden;
  const uint32_t lane = lane_id();
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const uint64_t seq = *b.seq();
  const Local l = local_of(view);
  // The rows per source (a pulling combine moves none: its flags go out at once).
  if (threadIdx.x == 0 && !pull) {
    first_row[0] = 0;
    for (int s = 0; s < n; ++s) first_row[s + 1] = first_row[s] + b.recv_count_src()[le * n + s];
  }
  __syncthreads();
  const uint64_t row_bytes = 2ull * hidden;
  for (int j = warp; !pull && j < first_row[n]; j += warps) {
    int s = 0;
    while (j >= first_row[s + 1]) ++s;
    const uint64_t r = b.row(le, s * p->max_tokens + (j - first_row[s]));
    const int send_row = reinterpret_cast<const int32_t*>(l.heap + b.recv_src(r))[3];
    const Peer peer = peer_of(view, s);
    char* dst = is_direct(peer)          ? peer.heap + b.combine_recv(send_row)
                : prefers_few_puts(peer) ? l.heap + b.combine_stage(s, b.recv_offset_src()[le * n + s] +
                                                                           (j - first_row[s]))
                                         : l.heap + b.combine_input(r);
    const uint16_t* src = y + r * hidden;
    if (dst != reinterpret_cast<const char*>(src)) warp_copy16(dst, src, row_bytes, lane);
  }
  // Every warp's rows are stored before any flag is set or staged row put.
  __syncthreads();
  const uint64_t flag = b.combine_flag(p->head.rank * p->head.num_local_experts + le);
  const uint64_t value = seq << 1 | (uint64_t)pull;
  // Direct sources (every source of a p2p world): warp 0 fences once, and lane s then SETs the flag at rank s,
  // after the fence in its own order (a release; cumulative, like the fences below). A fence per source's warp put
  // nranks fences per block in flight at once on every SM, and the first flags of a one-token combine left 3 us
  // after its start (2 H200s). With the first token set up before the wait (sum_returned_rows) a one-token combine
  // went from 0.015 to 0.013 ms and 128 tokens from 0.039 to 0.038 (same run; the two changes were timed together).
  if (warp == 0) {
    bool any = false;
    for (int s = (int)lane; s < n; s += 32) any |= is_direct(peer_of(view, s));
    if (__any_sync(0xffffffffu, any)) {
      fence_acq_rel_sys();
      for (int s = (int)lane; s < n; s += 32) {
        const Peer peer = peer_of(view, s);
        if (is_direct(peer)) signal(peer, flag, SIGNAL_SET, value);
      }
    }
  }
  for (int s = warp; s < n; s += warps) {
    const Peer peer = with_channel(peer_of(view, s), le);  // one QP per (source, expert): rows before their flag
    if (is_direct(peer)) continue;  // above
    const int32_t rows = pull ? 0 : first_row[s + 1] - first_row[s];
    if (prefers_few_puts(peer)) {
      // A batched source: this expert's rows are staged in the source's send order; the block that stages the last
      // expert's puts them all (a pulling combine has no batched pair: it needs every pair direct).
      if (lane == 0 && atom_add_acq_rel_gpu(b.combine_done() + s, 1) == p->head.num_local_experts - 1) {
        return_batched_rows(view, b, peer, s, value);
      }
    } else if (rows > 0) {
      // The staged rows (stored by every warp, shown to this one by the barrier) visible system-wide before the
      // copy engine or the NIC reads them; cumulative, like the fence below.
      const uint64_t r0 = b.row(le, s * p->max_tokens);
      const int send_row0 = reinterpret_cast<const int32_t*>(l.heap + b.recv_src(r0))[3];
      __threadfence_system();
      __syncwarp();
      put_signal_warp(peer, b.combine_recv(send_row0), b.combine_input(r0), rows * row_bytes, flag, SIGNAL_SET,
                      value);
    } else if (lane == 0 && fence(peer) == OK) {
      signal(peer, flag, SIGNAL_SET, value);
    }
  }
  // first_row is rewritten for the block's next expert only after every warp is done with it.
  __syncthreads();
}

}  // namespace moe_ll_kernels

extern "C" __global__ void __launch_bounds__(256) gda4j_moe_ll_combine_send(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf, const uint16_t* y, int pull) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  return_expert_rows(view, &params, buf, y, pull, blockIdx.x);
}

// Combine, receive half. Grid: blocks of 32 * LL_TOKEN_WARPS threads, any number (the host launches one warp per
// (token, 256-channel slice), capped at the rank's share of the SMs). Every block first waits for every expert's
// flag (a barrier over all ranks, see below); then the warp of (t, slice) sums its channels: acc = +0; for k = 0 ..
// top_k - 1 (skipping -1 and bad entries) acc = fma(weight[t][k], float(row(t, first k with that expert)[h]), acc);
// out = bf16_rn(acc): the order io.gda4j.moe.check.MoeLowLatencyReference documents. The rows are where the experts'
// ranks returned them (this rank's combine buffer), or with `pull` where they are: in the combine input of the
// expert's rank, read over NVLink, so nothing crossed twice and no copy waits before the sums. Every rank must run
// the same kind: a pulling rank reads rows a pushing rank never put in its combine input, and a pushing rank waits
// for rows a pulling one never sends. The flags carry each expert rank's kind, and a rank that sees the other kind
// records ERROR_COMBINE_INPUT_MIXED and sums nothing.
namespace moe_ll_kernels {

// The word that says expert e's rows are here: its flag, or for a batched pair its rank's batch word.
__device__ __forceinline__ uint64_t combine_word(const DeviceView* view, const LlBuffer& b, int e) {
  const int r = e / b.p->head.num_local_experts;
  return prefers_few_puts(peer_of(view, r)) ? b.combine_batch(r) : b.combine_flag(e);
}

// The counted protocol's wait before the sums, by every block of the grid (every thread calls it): returns whether
// the block may sum.
__device__ __forceinline__ bool wait_expert_flags(const DeviceView* view, const LlBuffer& b, uint64_t seq, int pull) {
  __shared__ int barrier_failed;
  const LlParams* p = b.p;
  const Local l = local_of(view);
  const int experts = p->head.num_experts;
  if (threadIdx.x == 0) barrier_failed = 0;
  __syncthreads();
  // Every expert's flag of this call, not only those of this rank's tokens (DeepEP's combine waits for all of them
  // too): every rank SETs its flags after its combine send half, which comes after its dispatch receive half, so
  // once this kernel is done every rank is done with this call's buffer. Without it a rank whose tokens never meet
  // some rank R's experts could run its next dispatch on this buffer (two calls on; one call on under a CUDA graph
  // that replays one buffer) while R has yet to receive this one: R would take the newer count as this call's and
  // return rows into a combine buffer already in use again.
  // Block 0 waits for all of them (the waits time out, and count in wait_ns), then publishes the outcome in
  // this rank's combine_ready word: seq, or seq | COMBINE_FAILED. Every other block has one thread wait for that
  // word alone, without a clock of its own (block 0 always writes it, and the host keeps the grid within the SMs,
  // so block 0 runs). Each block's barrier then orders those acquires before its warps' loads of the rows: no warp
  // needs a wait of its own per token (an acquire per lane per (token, slice) made this kernel 44 us at 128 tokens
  // of top-8 on an H100; 22 us without). Once every block's warp 0 polled every flag: 66 blocks x 32 lanes per rank,
  // and where proxy or ibgda peers set the flags that polling slowed them so that a 128-token combine took 25 ms on
  // one H100 shared by 2 ranks (1 token, 4 blocks: 0.4 ms).
  constexpr uint64_t COMBINE_FAILED = 1ull << 63;
  uint64_t* ready = b.combine_ready();
  const uint64_t want = seq << 1;
  if (blockIdx.x == 0) {
    int arrived = 1, other = -1;  // other: an expert whose rank ran the other kind of combine
    uint64_t other_value = 0;
    for (int e = threadIdx.x; e < experts && arrived; e += blockDim.x) {
      const uint64_t v = load_acquire_sys(reinterpret_cast<const uint64_t*>(l.heap + combine_word(view, b, e)));
      arrived = v >= want;
      if (arrived && (v & 1) != (uint64_t)pull) other = e, other_value = v;
    }
    // Those not seen yet: every thread waits for its own flags at once (warp 0 alone, each lane waiting for 8 flags
    // of 256 one after the other, put up to 8 load latencies in the chain).
    if (!__syncthreads_and(arrived)) {
      for (int e = threadIdx.x; e < experts; e += blockDim.x) {
        uint64_t v;
        // A batch word stands for all its rank's experts: its wait is counted once, by the first expert's thread.
        const uint64_t word = combine_word(view, b, e);
        const bool count = word == b.combine_flag(e) || e % p->head.num_local_experts == 0;
        if (ll_wait(l, p, word, want, e / p->head.num_local_experts, &v, count) != OK) {
          barrier_failed = 1;
          break;
        }
        if ((v & 1) != (uint64_t)pull) other = e, other_value = v;
      }
    }
    if (other >= 0) {
      record_error(view, ERROR_COMBINE_INPUT_MIXED, OP_WAIT_UNTIL, other / p->head.num_local_experts,
                   combine_word(view, b, other), want | (uint64_t)pull, other_value, CMP_GE, 0);
      barrier_failed = 1;
    }
    __syncthreads();
    // Cumulative: the release covers the flags the barrier showed thread 0.
    if (threadIdx.x == 0) store_release_gpu(ready, seq | (barrier_failed ? COMBINE_FAILED : 0));
  } else if (threadIdx.x == 0) {
    uint64_t v = load_acquire_gpu(ready);
    while ((v & ~COMBINE_FAILED) < seq) {
      __nanosleep(256);
      v = load_acquire_gpu(ready);
    }
    barrier_failed = (v & COMBINE_FAILED) != 0;
  }
  __syncthreads();
  return !barrier_failed;
}

// The tagged protocol's wait (ll_tagged.cuh): one flag per expert rank, so every block waits for all of them itself
// (warp 0, a lane per rank: no relay through block 0) and its barrier orders the acquires before its warps' loads.
// Returns whether the block may sum: false when a wait failed or a rank ran the other kind of combine (recorded).
__device__ __forceinline__ bool tag_wait_rank_flags(const DeviceView* view, const LlBuffer& b, uint64_t seq,
                                                    int pull) {
  __shared__ int flags_failed;
  const LlParams* p = b.p;
  const Local l = local_of(view);
  const uint32_t lane = lane_id();
  if (threadIdx.x == 0) flags_failed = 0;
  __syncthreads();
  if (threadIdx.x < 32 && lane < (uint32_t)p->head.nranks) {
    uint64_t v;
    const uint64_t word = b.combine_rank_flag((int)lane);
    if (ll_wait(l, p, word, seq << 1, (int)lane, &v, blockIdx.x == 0) != OK) {
      flags_failed = 1;
    } else if ((v & 1) != (uint64_t)pull) {
      record_error(view, ERROR_COMBINE_INPUT_MIXED, OP_WAIT_UNTIL, (int)lane, word, seq << 1 | (uint64_t)pull, v,
                   CMP_GE, 0);
      flags_failed = 1;
    }
  }
  __syncthreads();
  return !flags_failed;
}

// The receive half's work, by every block of the grid (every thread calls it). TAGGED: the tagged protocol's flags,
// one per expert rank (tag_wait_rank_flags), in place of the experts' flags and block 0's relay.
template <bool TAGGED>
__device__ __forceinline__ void sum_returned_rows(const DeviceView* view, const LlParams* p, int buf,
                                                  const int64_t* topk, const float* weights, int num_tokens, int pull) {
  const LlBuffer b{p, buf};
  const uint32_t lane = lane_id();
  const int k_count = p->head.top_k, experts = p->head.num_experts, hidden = p->head.hidden;
  const uint64_t seq = *b.seq();
  const Local l = local_of(view);
  const int warps = gridDim.x * blockDim.x / 32, warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  // Work items are (token, slice of 256 channels), so a token's sum is spread over hidden / 256 warps instead of
  // one warp walking the whole row (a chain of memory round trips: 130 us at hidden 7168 on an H100). A warp takes
  // a contiguous range of items, mostly slices of one token, and reads a token's top-k and weights once.
  const int slices = (hidden + 255) / 256;
  const int64_t items = (int64_t)num_tokens * slices;
  // The loop's bases, computed once: recomputed from the params in the loop they cost a dozen instructions per row
  // load (with the params by value the compiler takes their fields as free to reload; 128 tokens took 34 us, 23 us
  // with the params in device memory).
  const char* const recv_rows = l.heap + b.combine_recv(0);
  const uint64_t row_bytes = 2ull * hidden;
  const int local = p->head.num_local_experts, me = p->head.rank;
  uint16_t* const out = b.combined();
  const int32_t* const route_slot = b.route_slot();
  const int32_t* const send_base = b.send_base();
  const int64_t item_end = items * (warp + 1) / warps;
  int t = -1;
  const char* row = nullptr;  // lane k: the row of entry k (or of the first entry naming its expert); null: none
  float w = 0.0f;
  // A token's setup: lane k < top_k gets entry k's weight, and the row of the first k' <= k naming the same expert
  // (null for -1 and bad entries): where that expert returned it (its send row here), or where it is at the
  // expert's rank when pulling. The lanes holding one expert find each other with a match, whose lowest lane is the
  // first occurrence and the only one with a slot. Lanes without a valid entry match nobody (a key no expert has).
  // The whole warp calls it.
  auto load_token = [&](int token) {
    t = token;
    int64_t key = -2 - (int64_t)lane;
    w = 0.0f;
    const char* own = nullptr;
    if (lane < (uint32_t)k_count) {
      const int64_t e = topk[(int64_t)t * k_count + lane];
      w = weights[(int64_t)t * k_count + lane];
      if (e >= 0 && e < experts) {
        key = e;
        const int slot = route_slot[(int64_t)t * k_count + lane];
        if (slot >= 0 && pull) {
          own = peer_of(view, (int)e / local).heap +
                b.combine_input(b.row((int)e % local, me * p->max_tokens + slot));
        } else if (slot >= 0) {
          own = recv_rows + (uint64_t)(send_base[e] + slot) * row_bytes;
        }
      }
    }
    const uint32_t same = __match_any_sync(0xffffffffu, (unsigned long long)key);
    const int first = __ffs(same) - 1;
    row = reinterpret_cast<const char*>(__shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(own), first));
    if (key < 0) row = nullptr;
  };
  // The warp's first token is set up before the wait for the flags: nothing it reads comes from another rank (this
  // rank's route, its top-k and weights, addresses), so its chain of loads overlaps the wait.
  if (items * warp / warps < item_end) load_token((int)(items * warp / warps / slices));
  if (!(TAGGED ? tag_wait_rank_flags(view, b, seq, pull) : wait_expert_flags(view, b, seq, pull))) return;
  for (int64_t item = items * warp / warps; item < item_end; ++item) {
    const int h = (int)(item % slices) * 256 + (int)lane * 8;
    if ((int)(item / slices) != t) load_token((int)(item / slices));
    // hidden is a multiple of 128, not of 256: in the last slice of an odd number of 128-channel groups only lanes
    // 0..15 have channels, but every lane runs the shuffles below.
    const bool mine = h < hidden;
    float acc[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[i] = 0.0f;
    // The rows of a batch of top-k entries are loaded before any is summed (memory latency overlaps); the sums
    // still go in increasing k, the documented order. Every lane loads for every entry, an unused one from the
    // first landing row (in the buffer, read and ignored): loads under a condition were issued one at a time, each
    // waiting for the one before (the compiler moved each into place before the next; 34 us at 128 tokens, not 23).
    constexpr int BATCH = 8;
    for (int k0 = 0; k0 < k_count; k0 += BATCH) {
      uint4 v[BATCH];
      float wk[BATCH];
      bool use[BATCH];
#pragma unroll
      for (int i = 0; i < BATCH; ++i) {
        const int k = k0 + i;
        const char* r = reinterpret_cast<const char*>(
            __shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(row), k & 31));
        wk[i] = __shfl_sync(0xffffffffu, w, k & 31);
        use[i] = k < k_count && r != nullptr && mine;
        v[i] = *reinterpret_cast<const uint4*>(use[i] ? r + 2ull * h : recv_rows);
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
    if (mine) *reinterpret_cast<uint4*>(out + (int64_t)t * hidden + h) = pack_bf16x8(acc);
  }
}

}  // namespace moe_ll_kernels

extern "C" __global__ void __launch_bounds__(32 * LL_TOKEN_WARPS) gda4j_moe_ll_combine_recv(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf, const int64_t* topk,
    const float* weights, int num_tokens, int pull) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  sum_returned_rows<false>(view, &params, buf, topk, weights, num_tokens, pull);
}

// Combine without the split: both halves in one kernel, so no launch sits between the experts' rows (or flags) and
// the sums (at one token the two kernels took 0.021 ms on 2 H100s). Grid: blocks of 256 threads, all resident at
// once (the sums wait for every rank's flags, this rank's included, which the grid's own blocks set first): what the
// GPU holds at once where the rank has it alone (two blocks per SM at this kernel's 128 registers; against one per
// SM, the pulling combine went from 0.038 to 0.037 ms at 128 tokens and from 0.106 to 0.103 at 512 on 2 H200s), else
// the rank's share of the SMs. Block b returns the rows of local experts b, b + gridDim.x, ... as the send half
// does, then the grid sums as the receive half does.
extern "C" __global__ void __launch_bounds__(256) gda4j_moe_ll_combine(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf, const uint16_t* y, const int64_t* topk,
    const float* weights, int num_tokens, int pull) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  for (int le = blockIdx.x; le < params.head.num_local_experts; le += gridDim.x) {
    return_expert_rows(view, &params, buf, y, pull, le);
  }
  sum_returned_rows<false>(view, &params, buf, topk, weights, num_tokens, pull);
}

// ==== The tagged protocol (gda4j/moe/ll_tagged.cuh: worlds whose pairs are all direct) ====
// The dispatch's blocks route their own tokens (no route kernel, at any token count), send the count vectors and the
// rows with the call's tag in every word, and receive what the peers send them by polling those words; the combine
// sets one flag per rank. A call without the split is one kernel while one wave holds every send unit (else the host
// queues the two halves back to back). io.gda4j.moe.ll.LowLatencyRank launches these kernels where
// LowLatencySizing.tagged() says so, the kernels above otherwise.
namespace moe_ll_kernels {

// The call's sequence number, read once per block by thread 0 before anything that uses it; the block then arrives
// at route_arrivals at once (its arrival's return is looked at only in tag_finish, so the round trip overlaps the
// block's work), and the last block to arrive raises seq[buf] at its end: every block has read it by then, so all
// read the same value. (Arriving at the end put the atomic's round trip on the tail of every block: the kernel's.)
// Every thread calls it; *arrival: thread 0's arrival number.
__device__ __forceinline__ uint64_t tag_call_seq(const LlBuffer& b, int32_t* arrival) {
  __shared__ uint64_t call_seq;
  if (threadIdx.x == 0) call_seq = *reinterpret_cast<volatile uint64_t*>(b.seq()) + 1;
  __syncthreads();
  // Release: thread 0's read of seq[buf] above is ordered before the arrival.
  if (threadIdx.x == 0) *arrival = atom_add_acq_rel_gpu(b.route_arrivals(), 1);
  return call_seq;
}

// The end of a dispatch (or its send half) in every block, on every path: the last block to arrive (tag_call_seq;
// its acquire has every block's read of seq[buf] behind it) raises seq[buf] and resets the counter for the next call.
__device__ __forceinline__ void tag_finish(const LlBuffer& b, uint64_t seq, int32_t arrival) {
  if (threadIdx.x == 0 && arrival == (int32_t)gridDim.x - 1) {
    *b.route_arrivals() = 0;
    *b.seq() = seq;
  }
}

// What a token's send loads before anything else, none of it dependent on another load: the lane's chunks of the
// row (the first round), entry `lane` of the token's top-k, and rank `lane`'s heap as this GPU addresses it. Issued
// together (for a block's first unit before even the sequence number is read), so the row, the route's entries and
// the destinations cost one round trip between them, not one after another.
struct TagTokenLoads {
  uint4 lo[LL_SEND_BATCH], hi[LL_SEND_BATCH];
  int64_t entry;  // lane < top_k: the token's entry `lane`; -1 past it
  char* heap;     // lane < nranks: rank `lane`'s heap
};

__device__ __forceinline__ void tag_token_loads(const DeviceView* view, const LlParams* p, const uint16_t* x,
                                                const int64_t* topk, int t, int part, int parts, TagTokenLoads& l) {
  const uint32_t lane = lane_id();
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int hidden = p->head.hidden, k_count = p->head.top_k;
  load_lane_chunks(x + (int64_t)t * hidden, part * warps + warp, parts * warps, hidden, lane, l.lo, l.hi);
  l.entry = lane < (uint32_t)k_count ? topk[(int64_t)t * k_count + lane] : -1;
  l.heap = lane < (uint32_t)p->head.nranks ? peer_of(view, (int)lane).heap : nullptr;
}

// One token's route, by the block that sends it: entry k's expert (-1 for -1, a repeat or a bad entry) and slot (the
// earlier tokens naming that expert: the n-th token naming e gets slot n, as in the route kernel), the ranks holding
// its experts, and per rank the earlier tokens with an expert there (the token's row at that rank, tag_rows). The
// block's threads take the earlier tokens one each per pass (a 128-token call: one pass of K loads a thread, L1
// hits after the first block), so no route kernel runs before the dispatch at any token count. `entry`: warp 0's
// lanes' entries of the token (tag_token_loads).
struct TagRoute {
  int32_t expert[32];
  int32_t slot[32];
  int32_t index[MAX_RANKS];
  uint32_t ranks;
};

__device__ void tag_route(const LlParams* p, int64_t entry, const int64_t* topk, int t, TagRoute* r) {
  const int k_count = p->head.top_k, experts = p->head.num_experts, local = p->head.num_local_experts;
  const uint32_t lane = lane_id();
  const int warp = threadIdx.x >> 5;
  __syncthreads();  // the block's previous token is done with *r
  if (warp == 0) {
    const int64_t e = lane < (uint32_t)k_count ? entry : -1;
    const bool valid = e >= 0 && e < experts;
    const uint32_t same = __match_any_sync(0xffffffffu, valid ? e : -2 - (int64_t)lane);
    const bool first = valid && (same & ((1u << lane) - 1)) == 0;
    r->expert[lane] = first ? (int32_t)e : -1;
    r->slot[lane] = 0;
    if (lane < (uint32_t)MAX_RANKS) r->index[lane] = 0;
    const uint32_t ranks = __reduce_or_sync(0xffffffffu, first ? 1u << ((int32_t)e / local) : 0u);
    if (lane == 0) r->ranks = ranks;
  }
  __syncthreads();
  // Lane k accumulates the warp's count for entry k, lane d the one for rank d.
  int32_t for_entry = 0, for_rank = 0;
  const uint32_t ranks = r->ranks;
  for (int base = warp * 32; base < t; base += blockDim.x) {  // warp-uniform
    const int tp = base + (int)lane;
    uint32_t names = 0, on = 0;  // bit k: tp names entry k's expert; bit d: tp has an expert on rank d
    if (tp < t) {
      for (int j = 0; j < k_count; ++j) {
        const int64_t e = topk[(int64_t)tp * k_count + j];
        if (e < 0 || e >= experts) continue;
        on |= 1u << ((int32_t)e / local);
        for (int k = 0; k < k_count; ++k) names |= (uint32_t)(r->expert[k] == (int32_t)e) << k;
      }
    }
    for (int k = 0; k < k_count; ++k) {
      const int32_t c = __popc(__ballot_sync(0xffffffffu, (names >> k) & 1));
      if (lane == (uint32_t)k) for_entry += c;
    }
    for (uint32_t m = ranks; m != 0; m &= m - 1) {
      const int d = __ffs(m) - 1;
      const int32_t c = __popc(__ballot_sync(0xffffffffu, (on >> d) & 1));
      if (lane == (uint32_t)d) for_rank += c;
    }
  }
  if (for_entry != 0) atomicAdd(&r->slot[lane], for_entry);
  if (for_rank != 0) atomicAdd(&r->index[lane], for_rank);
  __syncthreads();
}

// Part `part` of `parts` of token t, by one block: the row's 512-channel chunks shared out over the parts' warps as
// in send_token (the first round in `l`, loaded before the route, which needs none of them), cast (FP8), and stored
// with the call's tag once to every other rank holding an expert of the token, into its row of this source there,
// and plain into each of its own experts' slots (ll_tagged.cuh: nothing in the call reads them, so no tag); part 0's
// warp 0 then writes the row's header (the token, each entry's place) as tagged pairs to every rank holding an
// expert of the token, this one included (its receive half writes the source records from it), and this rank's
// route_slot entries. Direct stores only: nothing fails.
__device__ __forceinline__ void tag_send_token(const DeviceView* view, const LlBuffer& b, const uint16_t* x,
                                               const int64_t* topk, int t, int part, int parts, uint32_t tag,
                                               TagRoute* route, TagTokenLoads& l) {
  const LlParams* p = b.p;
  const uint32_t lane = lane_id();
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int k_count = p->head.top_k, local = p->head.num_local_experts, me = p->head.rank, hidden = p->head.hidden;
  const bool fp8 = p->head.dtype == LL_DTYPE_FP8_E4M3;
  const bool pow2 = p->power_of_two_scales != 0;
  const uint16_t* row = x + (int64_t)t * hidden;
  const int chunks = (hidden + LL_CHUNK - 1) / LL_CHUNK;
  const int first = part * warps + warp, stride = parts * warps;
  tag_route(p, l.entry, topk, t, route);
  const uint32_t ranks = route->ranks, others = ranks & ~(1u << me);
  // Lane d: this token's row at rank d (its header, and at another rank its payload too).
  char* head_at = nullptr;
  if (lane < (uint32_t)p->head.nranks && ((ranks >> lane) & 1)) head_at = l.heap + b.tag_row(me, route->index[lane]);
  // Lane k: entry k's slot here where its expert is this rank's: the row and its scales go there, plain.
  const int32_t expert = lane < (uint32_t)k_count ? route->expert[lane] : -1;
  const int32_t slot = lane < (uint32_t)k_count ? route->slot[lane] : 0;
  char* const my_heap = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(l.heap), me));
  const bool own = expert >= 0 && expert / local == me;
  char* own_x = nullptr;
  float* own_scales = nullptr;
  if (own) {
    const uint64_t r = b.row(expert % local, me * p->max_tokens + slot);
    own_x = my_heap + b.recv_x(r);
    own_scales = reinterpret_cast<float*>(my_heap + b.recv_scales(r));
  }
  const uint32_t owns = __ballot_sync(0xffffffffu, own);
  const uint64_t payload_at = 8ull * p->tag_header_words, scales_at = 8ull * p->tag_scale_word;  // within a row
  for (int c0 = first; c0 < chunks; c0 += LL_SEND_BATCH * stride) {
    if (c0 != first) load_lane_chunks(row, c0, stride, hidden, lane, l.lo, l.hi);
    uint4 q[LL_SEND_BATCH];
    float scale[LL_SEND_BATCH];
    if (fp8) quantize_lane_chunks(c0, stride, chunks, pow2, l.lo, l.hi, q, scale);
    for (uint32_t m = others; m != 0; m &= m - 1) {
      const int d = __ffs(m) - 1;
      char* to = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(head_at), d));
      char* pairs = to + payload_at;
#pragma unroll
      for (int i = 0; i < LL_SEND_BATCH; ++i) {
        const int c = c0 + i * stride;
        const int ch = c * LL_CHUNK + (int)lane * LL_LANE_CHANNELS;
        if (ch >= hidden) continue;
        // Pair c x 32Q + j x 32 + lane: each store instruction of the warp writes 512 contiguous bytes.
        if (fp8) {
          char* at = pairs + 16ull * ((uint64_t)c * 64 + lane);
          store_tagged_pair(at, q[i].x, q[i].y, tag);
          store_tagged_pair(at + 16 * 32, q[i].z, q[i].w, tag);
          if ((lane & 7) == 0) store_tagged_word(to + scales_at + 8ull * (ch / LL_SCALE_BLOCK),
                                                 __float_as_uint(scale[i]), tag);
        } else {
          char* at = pairs + 16ull * ((uint64_t)c * 128 + lane);
          store_tagged_pair(at, l.lo[i].x, l.lo[i].y, tag);
          store_tagged_pair(at + 16 * 32, l.lo[i].z, l.lo[i].w, tag);
          store_tagged_pair(at + 16 * 64, l.hi[i].x, l.hi[i].y, tag);
          store_tagged_pair(at + 16 * 96, l.hi[i].z, l.hi[i].w, tag);
        }
      }
    }
    for (uint32_t m = owns; m != 0; m &= m - 1) {
      const int k = __ffs(m) - 1;
      char* dx = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(own_x), k));
      float* ds = reinterpret_cast<float*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(own_scales), k));
      store_lane_chunks(dx, ds, c0, stride, hidden, lane, fp8, q, scale, l.lo, l.hi);
    }
  }
  if (part == 0 && warp == 0) {
    if (lane < (uint32_t)k_count) b.route_slot()[(int64_t)t * k_count + lane] = expert >= 0 ? slot : -1;
    // Header pair j (lane j < tag_header_words / 2) holds words 2j and 2j + 1: word 0 the token, word 1 + k entry
    // k's place, the padding word 0. Lane j takes entries 2j - 1 and 2j from their lanes.
    const int w0 = 2 * (int)lane, w1 = w0 + 1;
    for (uint32_t m = ranks; m != 0; m &= m - 1) {
      const int d = __ffs(m) - 1;
      char* to = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(head_at), d));
      const uint32_t place = expert >= 0 && expert / local == d
                                 ? (uint32_t)((expert % local) * p->max_tokens + slot) : LL_NO_PLACE;
      const uint32_t a = __shfl_sync(0xffffffffu, place, (w0 - 1) & 31), c = __shfl_sync(0xffffffffu, place, w0 & 31);
      if (w0 < p->tag_header_words) {
        store_tagged_pair(to + 16ull * lane, w0 == 0 ? (uint32_t)t : w0 - 1 < k_count ? a : 0u,
                          w1 - 1 < k_count ? c : 0u, tag);
      }
    }
  }
}

// The count vector for rank d (ll_tagged.cuh), by one block: every entry of this rank's top-k read once (a thread
// per token), the first of each distinct expert counted; then stored with the call's tag at rank d, zero or not. It
// also leaves what this rank's later calls read of d's experts: send_count and send_base (the pushing combine's
// landing rows), and for d = 0 status[buf]. `cnt`: num_local_experts words of shared memory.
__device__ void tag_send_counts(const DeviceView* view, const LlBuffer& b, const int64_t* topk, int num_tokens, int d,
                                uint32_t tag, int32_t* cnt) {
  __shared__ int32_t rows_to_rank, rows_below;
  __shared__ unsigned long long bad;
  const LlParams* p = b.p;
  const int k_count = p->head.top_k, experts = p->head.num_experts, local = p->head.num_local_experts;
  const uint32_t lane = lane_id();
  __syncthreads();  // the block's previous unit is done with the shared words
  for (int le = threadIdx.x; le < local; le += blockDim.x) cnt[le] = 0;
  if (threadIdx.x == 0) {
    rows_to_rank = 0;
    rows_below = 0;
    bad = ~0ull;
  }
  __syncthreads();
  int32_t on_rank = 0, below = 0;
  for (int tp = threadIdx.x; tp < num_tokens; tp += blockDim.x) {
    bool on = false;
    for (int j = 0; j < k_count; ++j) {
      const int64_t i = (int64_t)tp * k_count + j;
      const int64_t e = topk[i];
      if (e < -1 || e >= experts) atomicMin(&bad, (unsigned long long)i);
      if (e < 0 || e >= experts) continue;
      bool first = true;
      for (int jj = 0; jj < j && first; ++jj) first = topk[(int64_t)tp * k_count + jj] != e;
      if (!first) continue;
      const int r = (int)e / local;
      if (r == d) {
        atomicAdd(&cnt[(int)e - d * local], 1);
        on = true;
      } else if (r < d) {
        ++below;
      }
    }
    on_rank += on;
  }
  on_rank = __reduce_add_sync(0xffffffffu, on_rank);
  below = __reduce_add_sync(0xffffffffu, below);
  if (lane == 0 && on_rank != 0) atomicAdd(&rows_to_rank, on_rank);
  if (lane == 0 && below != 0) atomicAdd(&rows_below, below);
  __syncthreads();
  char* v = peer_of(view, d).heap + b.tag_counts(p->head.rank);
  auto word = [&](int w) -> uint32_t {
    return w == 0 ? (uint32_t)rows_to_rank : w == 1 ? (uint32_t)rows_below : w - 2 < local ? (uint32_t)cnt[w - 2] : 0u;
  };
  for (int i = threadIdx.x; 2 * i < p->tag_count_words; i += blockDim.x) {
    store_tagged_pair(v + 16ull * i, word(2 * i), word(2 * i + 1), tag);
  }
  // send_base of d's experts: an exclusive scan of cnt from rows_below, 32 experts at a time by warp 0.
  if (threadIdx.x < 32) {
    int32_t carry = rows_below;
    for (int c = 0; c < local; c += 32) {
      const int le = c + (int)lane;
      const int32_t n = le < local ? cnt[le] : 0;
      int32_t incl = n;
      for (int o = 1; o < 32; o <<= 1) {
        const int32_t u = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= (uint32_t)o) incl += u;
      }
      if (le < local) {
        b.send_count()[d * local + le] = n;
        b.send_base()[d * local + le] = carry + incl - n;
      }
      carry += __shfl_sync(0xffffffffu, incl, 31);
    }
  }
  if (d == 0 && threadIdx.x == 0) *b.status() = bad == ~0ull ? 0 : bad + 1;
}

// The send half's work, by every block of the grid (every thread calls it). Units: the count vector for each rank
// first (units 0 .. nranks - 1, so the receivers learn early how many rows to wait for), then every (token, part);
// block b takes units b, b + gridDim.x, ... A block's first token unit has its loads issued before the sequence
// number is read (tag_token_loads). Returns the call's sequence number; *arrival: thread 0's (tag_call_seq).
// `shared`: dynamic shared memory of nranks x (num_local_experts + 1) words (the receive's; a count unit uses
// num_local_experts of them).
__device__ __forceinline__ uint64_t tag_send_units(const DeviceView* view, const LlBuffer& b, const uint16_t* x,
                                                   const int64_t* topk, int num_tokens, int parts, int32_t* shared,
                                                   int32_t* arrival) {
  __shared__ TagRoute route;
  const int n = b.p->head.nranks;
  const int64_t units = n + (int64_t)num_tokens * parts;
  TagTokenLoads l;
  const int64_t u0 = blockIdx.x;
  if (u0 >= n && u0 < units) tag_token_loads(view, b.p, x, topk, (int)((u0 - n) / parts), (int)((u0 - n) % parts),
                                             parts, l);  // block-uniform
  const uint64_t seq = tag_call_seq(b, arrival);
  const uint32_t tag = (uint32_t)seq;
  // The pushing combine's arrivals start from zero (the combine before on this buffer came before this kernel).
  if (blockIdx.x == 0 && threadIdx.x == 0) b.combine_done()[0] = 0;
  for (int64_t u = u0; u < units; u += gridDim.x) {  // block-uniform
    if (u < n) {
      tag_send_counts(view, b, topk, num_tokens, (int)u, tag, shared);
    } else {
      const int64_t i = u - n;
      const int t = (int)(i / parts), part = (int)(i % parts);
      if (u != u0) tag_token_loads(view, b.p, x, topk, t, part, parts, l);
      tag_send_token(view, b, x, topk, t, part, parts, tag, &route, l);
    }
  }
  return seq;
}

// The tagged receive's work items: for each row index i (a source's i-th row here), the segments of every other
// source's row i, then this rank's own row i (its header alone: the payload is in place). `segments`: a row's
// segments of TAG_SEGMENT_PAIRS pairs a lane (io.gda4j.moe.ll.LowLatencySizing.tagSegments() on the host).
struct TagItem {
  int i, s, seg;
};

__device__ __forceinline__ TagItem tag_item(int64_t u, int per_index, int segments, int me) {
  TagItem it;
  it.i = (int)(u / per_index);
  const int r = (int)(u % per_index);
  if (r == per_index - 1) {
    it.s = me;
    it.seg = 0;
  } else {
    const int q = r / segments;
    it.s = q + (q >= me);
    it.seg = r % segments;
  }
  return it;
}

// One warp's segment of a row, what each lane loads at once: pairs 0 .. PAIRS - 1 of the payload (chunk c0 + j / Q,
// pair j % Q of it: the layout of ll_tagged.cuh), the header pair `lane` (lanes < tag_header_words / 2), and the
// segment's scale word `lane` (FP8, lanes < SCALES). `want`: the slots this lane loaded.
template <bool FP8>
struct TagSegment {
  static constexpr int PAIRS = (int)MoeLowLatencyParamsDescriptor::TAG_SEGMENT_PAIRS;
  static constexpr int Q = FP8 ? 2 : 4;                 // a lane's pairs per chunk
  static constexpr int CHUNKS = PAIRS / Q;              // chunks per segment
  static constexpr int SCALES = CHUNKS * LL_TAG_CHUNK / LL_SCALE_BLOCK;  // FP8 scale words per segment
  static constexpr int HEAD = PAIRS, SCALE = PAIRS + 1, SLOTS = PAIRS + 2;
  uint64_t lo[SLOTS], hi[SLOTS];
  uint32_t want;

  __device__ __forceinline__ static int segments(int hidden) {
    const int chunks = (hidden + LL_TAG_CHUNK - 1) / LL_TAG_CHUNK;
    return (chunks + CHUNKS - 1) / CHUNKS;
  }
};

template <bool FP8>
__device__ __forceinline__ uint32_t tag_segment_want(const LlParams* p, const TagItem& it, uint32_t lane) {
  using S = TagSegment<FP8>;
  uint32_t want = lane < (uint32_t)p->tag_header_words / 2 ? 1u << S::HEAD : 0u;
  if (it.s == p->head.rank) return want;  // this rank's own row: the header alone
#pragma unroll
  for (int j = 0; j < S::PAIRS; ++j) {
    const int ch = (it.seg * S::CHUNKS + j / S::Q) * LL_TAG_CHUNK + (int)lane * LL_LANE_CHANNELS;
    want |= (uint32_t)(ch < p->head.hidden) << j;
  }
  const int g = it.seg * S::SCALES + (int)lane;
  if (FP8 && lane < (uint32_t)S::SCALES && g < p->scales_per_row) want |= 1u << S::SCALE;
  return want;
}

// Where slot j of item `it`'s segment lies, for this lane (heap offsets).
template <bool FP8>
struct TagSegmentAt {
  const LlBuffer& b;
  TagItem it;
  uint32_t lane;
  __device__ __forceinline__ TagSlot operator()(int j) const {
    using S = TagSegment<FP8>;
    const uint64_t row = b.tag_row(it.s, it.i);
    if (j == S::HEAD) return TagSlot{row + 16ull * lane, true};
    if (j == S::SCALE) return TagSlot{row + 8ull * (b.p->tag_scale_word + it.seg * S::SCALES + lane), false};
    const uint64_t pair = (uint64_t)(it.seg * S::CHUNKS + j / S::Q) * 32 * S::Q + (j % S::Q) * 32 + lane;
    return TagSlot{row + 8ull * b.p->tag_header_words + 16ull * pair, true};
  }
};

// Item `it`'s segment, by one warp, once its loads were issued (tag_load into `sg`): waits until every word it loaded
// carries the call's tag (tag_poll), then copies the payload pairs and scales into each place the header names, and
// for segment 0 writes the source records (s, t, k, send row) beside them. `counts`: source s's exclusive prefix
// over the local experts (tag_receive), from which the send row follows as in MoeLowLatencyReference
// (rows_below + prefix + slot). Returns OK, or ERR_ABORTED once a wait failed.
template <bool FP8>
__device__ __forceinline__ int tag_take_segment(const DeviceView* view, const LlBuffer& b, char* heap,
                                                const TagItem& it, uint32_t tag, TagSegment<FP8>& sg,
                                                const int32_t* counts, int32_t rows_below) {
  using S = TagSegment<FP8>;
  const LlParams* p = b.p;
  const uint32_t lane = lane_id();
  const int k_count = p->head.top_k, local = p->head.num_local_experts;
  const int max_tokens = p->max_tokens;
  const int st = tag_poll(view, heap, sg.want, tag, sg.lo, sg.hi, TagSegmentAt<FP8>{b, it, lane});
  if (__any_sync(0xffffffffu, st != OK)) return ERR_ABORTED;
  // Lane k's place: header word 1 + k, in pair (1 + k) / 2 (the low word for odd k); the token: word 0.
  const int from = (1 + (int)lane) >> 1;
  const uint64_t hlo = __shfl_sync(0xffffffffu, sg.lo[S::HEAD], from);
  const uint64_t hhi = __shfl_sync(0xffffffffu, sg.hi[S::HEAD], from);
  const uint32_t t = (uint32_t)__shfl_sync(0xffffffffu, sg.lo[S::HEAD], 0);
  const uint32_t place = lane < (uint32_t)k_count ? (uint32_t)((lane & 1) ? hlo : hhi) : LL_NO_PLACE;
  // A sender writes no place outside the buffer; one that is (a corrupt row) is skipped, never followed.
  const bool placed = place != LL_NO_PLACE && place / (uint32_t)max_tokens < (uint32_t)local;
  const uint32_t places = __ballot_sync(0xffffffffu, placed);
  char* to_x = nullptr;
  float* to_scales = nullptr;
  if (placed) {
    const int le = (int)(place / (uint32_t)max_tokens), slot = (int)(place % (uint32_t)max_tokens);
    const uint64_t r = b.row(le, it.s * max_tokens + slot);
    if (it.seg == 0) {
      *reinterpret_cast<int4*>(heap + b.recv_src(r)) =
          make_int4(it.s, (int)t, (int)lane, rows_below + counts[le] + slot);
    }
    to_x = heap + b.recv_x(r);
    to_scales = reinterpret_cast<float*>(heap + b.recv_scales(r));
  }
  if (it.s == p->head.rank) return OK;  // warp-uniform: the sender stored its own row in place
  for (uint32_t m = places; m != 0; m &= m - 1) {
    const int k = __ffs(m) - 1;
    char* dx = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(to_x), k));
    float* ds = reinterpret_cast<float*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(to_scales), k));
#pragma unroll
    for (int cc = 0; cc < S::CHUNKS; ++cc) {
      const int j = cc * S::Q;
      if (!((sg.want >> j) & 1)) continue;
      const int ch = (it.seg * S::CHUNKS + cc) * LL_TAG_CHUNK + (int)lane * LL_LANE_CHANNELS;
      if (FP8) {
        *reinterpret_cast<uint4*>(dx + ch) =
            make_uint4((uint32_t)sg.lo[j], (uint32_t)sg.hi[j], (uint32_t)sg.lo[j + 1], (uint32_t)sg.hi[j + 1]);
      } else {
        uint4* at = reinterpret_cast<uint4*>(dx + 2 * ch);
        at[0] = make_uint4((uint32_t)sg.lo[j], (uint32_t)sg.hi[j], (uint32_t)sg.lo[j + 1], (uint32_t)sg.hi[j + 1]);
        at[1] = make_uint4((uint32_t)sg.lo[j + 2], (uint32_t)sg.hi[j + 2], (uint32_t)sg.lo[j + 3],
                           (uint32_t)sg.hi[j + 3]);
      }
    }
    if ((sg.want >> S::SCALE) & 1) ds[it.seg * S::SCALES + lane] = __uint_as_float((uint32_t)sg.lo[S::SCALE]);
  }
  return OK;
}

// The receive half's work, by every block of the grid (every thread calls it). Each warp issues the loads of its
// first item before anything else (the row may not exist: the counts say so later, and unused loads are dropped),
// so they are in flight while the block takes every source's count vector, its threads a pair each (block 0 counts
// the waits in wait_ns and writes recv_count_src and recv_count), and each source's exclusive prefix over the local
// experts (shared, for the send rows). Then the warps take the items (tag_item) that exist, item u by warp u of the
// grid, then u + the grid's warps, ... A block none of whose warps has an item returns at once (block 0 stays: it
// writes the counts). `shared`: nranks x (num_local_experts + 1) words of dynamic shared memory. Returns OK, or
// ERR_ABORTED once a wait failed.
template <bool FP8>
__device__ __forceinline__ int tag_receive_items(const DeviceView* view, const LlBuffer& b, uint32_t tag,
                                                 int32_t* shared) {
  __shared__ int32_t rows_of[MAX_RANKS];  // rows_of[s]: source s's rows here
  __shared__ int32_t below_of[MAX_RANKS];
  __shared__ int32_t most_rows;
  __shared__ int receive_failed;
  using S = TagSegment<FP8>;
  const LlParams* p = b.p;
  const int n = p->head.nranks, local = p->head.num_local_experts, me = p->head.rank;
  const uint32_t lane = lane_id();
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const Local l = local_of(view);
  const int segments = S::segments(p->head.hidden);
  const int per_index = (n - 1) * segments + 1;
  const int64_t grid_warps = (int64_t)gridDim.x * warps, g = (int64_t)blockIdx.x * warps + warp;
  const int64_t bound = (int64_t)per_index * p->max_tokens;
  if (blockIdx.x != 0 && (int64_t)blockIdx.x * warps >= bound) return OK;  // block-uniform
  TagSegment<FP8> sg;
  TagItem it = tag_item(g, per_index, segments, me);
  sg.want = g < bound ? tag_segment_want<FP8>(p, it, lane) : 0u;
  tag_load(l.heap, sg.want, sg.lo, sg.hi, TagSegmentAt<FP8>{b, it, lane});
  __syncthreads();  // the send units are done with the shared words
  if (threadIdx.x == 0) {
    receive_failed = 0;
    most_rows = 0;
  }
  __syncthreads();
  const int pairs = p->tag_count_words / 2;
  for (int i = threadIdx.x; i < n * pairs; i += blockDim.x) {
    const int s = i / pairs, q = i % pairs;
    const uint64_t off = b.tag_counts(s) + 16ull * q;
    uint64_t lo[1], hi[1];
    load_slot_relaxed_sys(reinterpret_cast<const uint64_t*>(l.heap + off), lo[0], hi[0]);
    if (!both_tagged(lo[0], hi[0], tag)) {
      const bool account = blockIdx.x == 0 && q == 0;  // a source's wait counted once
      const uint64_t start = account ? global_timer_ns() : 0;
      const int st = tag_poll(view, l.heap, 1u, tag, lo, hi, [&](int) { return TagSlot{off, true}; });
      if (account) {
        atomicAdd(reinterpret_cast<unsigned long long*>(p->wait_ns) + s,
                  (unsigned long long)(global_timer_ns() - start));
      }
      if (st != OK) {
        receive_failed = 1;
        break;
      }
    }
    for (int h = 0; h < 2; ++h) {
      const int w = 2 * q + h;
      const int32_t v = (int32_t)(uint32_t)(h == 0 ? lo[0] : hi[0]);
      if (w == 0) {
        const int32_t rows = min(max(v, 0), p->max_tokens);  // a sender sends at most a row per token: read no further
        rows_of[s] = rows;
        atomicMax(&most_rows, rows);
      } else if (w == 1) {
        below_of[s] = v;
      } else if (w - 2 < local) {
        shared[s * (local + 1) + w - 2] = v;
      }
    }
  }
  __syncthreads();
  if (receive_failed) return ERR_ABORTED;  // block-uniform
  // Each source's exclusive prefix in place (and its total at [local]), a warp per source.
  for (int s = warp; s < n; s += warps) {
    int32_t* a = shared + s * (local + 1);
    int32_t carry = 0;
    for (int c = 0; c < local; c += 32) {
      const int le = c + (int)lane;
      const int32_t v = le < local ? a[le] : 0;
      int32_t incl = v;
      for (int o = 1; o < 32; o <<= 1) {
        const int32_t u = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= (uint32_t)o) incl += u;
      }
      if (le < local) a[le] = carry + incl - v;
      carry += __shfl_sync(0xffffffffu, incl, 31);
    }
    if (lane == 0) a[local] = carry;
  }
  __syncthreads();
  if (blockIdx.x == 0) {
    for (int le = threadIdx.x; le < local; le += blockDim.x) {
      int32_t total = 0;
      for (int s = 0; s < n; ++s) {
        const int32_t* a = shared + s * (local + 1);
        const int32_t c = a[le + 1] - a[le];
        b.recv_count_src()[le * n + s] = c;
        total += c;
      }
      b.recv_count()[le] = total;
    }
  }
  const int64_t end = (int64_t)per_index * most_rows;
  for (int64_t u = g; u < end; u += grid_warps) {  // warp-uniform
    if (u != g) it = tag_item(u, per_index, segments, me);
    if (it.i >= rows_of[it.s]) continue;
    if (u != g) {
      sg.want = tag_segment_want<FP8>(p, it, lane);
      tag_load(l.heap, sg.want, sg.lo, sg.hi, TagSegmentAt<FP8>{b, it, lane});
    }
    if (tag_take_segment<FP8>(view, b, l.heap, it, tag, sg, shared + it.s * (local + 1), below_of[it.s]) != OK) {
      return ERR_ABORTED;
    }
  }
  return OK;
}

__device__ __forceinline__ int tag_receive(const DeviceView* view, const LlBuffer& b, uint32_t tag, int32_t* shared) {
  return b.p->head.dtype == LL_DTYPE_FP8_E4M3 ? tag_receive_items<true>(view, b, tag, shared)
                                              : tag_receive_items<false>(view, b, tag, shared);
}

// The pushing combine's rows of local expert `le`, by one block, as return_expert_rows stores them for direct
// sources; then the block arrives at combine_done[0], and the thread whose arrival completes it (every local
// expert's rows in its past: GPU-scope release and acquire) fences once at system scope and SETs this rank's flag at
// every rank.
__device__ void tag_return_rows(const DeviceView* view, const LlBuffer& b, const uint16_t* y, int le, uint64_t seq) {
  __shared__ int32_t first_row[MAX_RANKS + 1];
  const LlParams* p = b.p;
  const int n = p->head.nranks, hidden = p->head.hidden;
  const uint32_t lane = lane_id();
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const Local l = local_of(view);
  __syncthreads();  // the block's previous expert is done with first_row
  if (threadIdx.x == 0) {
    first_row[0] = 0;
    for (int s = 0; s < n; ++s) first_row[s + 1] = first_row[s] + b.recv_count_src()[le * n + s];
  }
  __syncthreads();
  const uint64_t row_bytes = 2ull * hidden;
  for (int j = warp; j < first_row[n]; j += warps) {
    int s = 0;
    while (j >= first_row[s + 1]) ++s;
    const uint64_t r = b.row(le, s * p->max_tokens + (j - first_row[s]));
    const int send_row = reinterpret_cast<const int32_t*>(l.heap + b.recv_src(r))[3];
    warp_copy16(peer_of(view, s).heap + b.combine_recv(send_row), y + r * hidden, row_bytes, lane);
  }
  __syncthreads();
  if (threadIdx.x == 0 && atom_add_acq_rel_gpu(b.combine_done(), 1) == p->head.num_local_experts - 1) {
    fence_acq_rel_sys();
    for (int s = 0; s < n; ++s) signal(peer_of(view, s), b.combine_rank_flag(p->head.rank), SIGNAL_SET, seq << 1);
  }
}

// The pulling combine's flags: nothing moves, so one thread fences once (the expert outputs were written before this
// kernel) and SETs this rank's flag at every rank.
__device__ __forceinline__ void tag_publish_pulled(const DeviceView* view, const LlBuffer& b, uint64_t seq) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  fence_acq_rel_sys();
  for (int s = 0; s < b.p->head.nranks; ++s) {
    signal(peer_of(view, s), b.combine_rank_flag(b.p->head.rank), SIGNAL_SET, seq << 1 | 1);
  }
}

}  // namespace moe_ll_kernels

// Dispatch, send half (tagged). Grid: nranks + num_tokens x parts blocks (or fewer: they loop) of 32 * LL_TOKEN_WARPS
// threads, dynamic shared memory nranks x (num_local_experts + 1) words.
extern "C" __global__ void __launch_bounds__(32 * LL_TOKEN_WARPS) gda4j_moe_ll_tagged_dispatch_send(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf, const uint16_t* x, const int64_t* topk,
    int num_tokens, int parts) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  extern __shared__ int32_t tag_shared[];
  const LlBuffer b{&params, buf};
  int32_t arrival = 0;
  const uint64_t seq = tag_send_units(view, b, x, topk, num_tokens, parts, tag_shared, &arrival);
  tag_finish(b, seq, arrival);
}

// Dispatch, receive half (tagged). Grid: any number of blocks of 256 threads, within the rank's share of the SMs
// (the host gives it a warp per item, tag_item, of as many rows per source as the rank's own tokens); dynamic shared
// memory as the send half's. After the send half on the same stream (it raised seq[buf]).
extern "C" __global__ void __launch_bounds__(32 * LL_TOKEN_WARPS) gda4j_moe_ll_tagged_dispatch_recv(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  extern __shared__ int32_t tag_shared[];
  const LlBuffer b{&params, buf};
  tag_receive(view, b, (uint32_t)*b.seq(), tag_shared);
}

// Dispatch without the split (tagged): both halves in one grid that the GPU holds at once (the receive waits for
// this rank's own rows and counts too, which the grid's blocks send first). No route kernel before it.
extern "C" __global__ void __launch_bounds__(32 * LL_TOKEN_WARPS) gda4j_moe_ll_tagged_dispatch(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf, const uint16_t* x, const int64_t* topk,
    int num_tokens, int parts) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  extern __shared__ int32_t tag_shared[];
  const LlBuffer b{&params, buf};
  int32_t arrival = 0;
  const uint64_t seq = tag_send_units(view, b, x, topk, num_tokens, parts, tag_shared, &arrival);
  tag_receive(view, b, (uint32_t)seq, tag_shared);
  tag_finish(b, seq, arrival);
}

// Combine, send half (tagged): pulling, one block (the flags); pushing, num_local_experts blocks of 256 threads.
extern "C" __global__ void __launch_bounds__(256) gda4j_moe_ll_tagged_combine_send(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf, const uint16_t* y, int pull) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  const LlBuffer b{&params, buf};
  const uint64_t seq = *b.seq();
  if (pull) {
    tag_publish_pulled(view, b, seq);
  } else {
    for (int le = blockIdx.x; le < params.head.num_local_experts; le += gridDim.x) tag_return_rows(view, b, y, le, seq);
  }
}

// Combine, receive half (tagged): as gda4j_moe_ll_combine_recv, waiting for one flag per rank.
extern "C" __global__ void __launch_bounds__(32 * LL_TOKEN_WARPS) gda4j_moe_ll_tagged_combine_recv(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf, const int64_t* topk,
    const float* weights, int num_tokens, int pull) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  sum_returned_rows<true>(view, &params, buf, topk, weights, num_tokens, pull);
}

// Combine without the split (tagged): the flags (pulling) or the rows and then the flags (pushing), then the sums,
// in one grid that the GPU holds at once.
extern "C" __global__ void __launch_bounds__(256) gda4j_moe_ll_tagged_combine(
    const DeviceView* view, const __grid_constant__ LlParams params, int buf, const uint16_t* y, const int64_t* topk,
    const float* weights, int num_tokens, int pull) {
  if (params.head.magic != MoeLowLatencyParamsDescriptor::PARAMS_MAGIC) return;
  const LlBuffer b{&params, buf};
  const uint64_t seq = *b.seq();
  if (pull) {
    tag_publish_pulled(view, b, seq);
  } else {
    for (int le = blockIdx.x; le < params.head.num_local_experts; le += gridDim.x) tag_return_rows(view, b, y, le, seq);
  }
  sum_returned_rows<true>(view, &params, buf, topk, weights, num_tokens, pull);
}

// MoE expert parallelism for large batches (io.gda4j.moe, high throughput) in worlds with rings (some pair of ranks
// is proxy or ibgda): dispatch and combine through a ring per (channel, peer) with credits. Two thread blocks per
// channel (a contiguous range of every rank's tokens): an even block that sends, an odd block that receives. All
// blocks of all ranks must be resident at once, since they wait for each other (MoeBuffer checks the grid against the
// GPU). Blocks are at most 512 threads (__launch_bounds__(512)), which leaves a thread 128 registers: with 1024-thread
// blocks a thread got 64, and the row copies spilled each loaded vector to local memory before storing it, which
// made every warp copy a chain of round trips (one rank alone moved 37 GB/s on an H100).
// gda4j/moe/ring.cuh has the channel protocol, gda4j/moe/params.cuh the parameter block; the layout kernel is in
// kernels/moe_layout.cu.
#include <gda4j/gda4j.cuh>
#include <gda4j/moe/ring.cuh>

using namespace gda4j;
using namespace gda4j::moe;

// A named namespace, not an anonymous one: nvcc names the static __shared__ variables of functions in an anonymous
// namespace with a hash of the file's absolute path, which would make the PTX depend on where the repository lives.
namespace moe_kernels {

// The row of a 32-token window's mask that is its k-th set bit (k from 0).
__device__ __forceinline__ int nth_set_bit(uint32_t mask, int k) {
  for (int i = 0; i < k; ++i) mask &= mask - 1;
  return __ffs(mask) - 1;
}

__device__ __forceinline__ GroupSender make_sender(const DeviceView* view, const MoeParams* prm, int c, int dest,
                                                   bool dispatch, int w, int warps, int* status) {
  GroupSender s;
  const int me = prm->head.rank, n = prm->head.nranks;
  const SignalIndex si = signal_index(prm);
  s.peer = with_channel(peer_of(view, dest), c);  // a channel's rows, tails and credits share one QP of the pair
  s.me = local_of(view);
  s.prm = prm;
  s.direct = is_direct(s.peer);
  s.row_bytes = dispatch ? prm->dispatch_row_bytes : prm->combine_row_bytes;
  s.ring = prm->ring_tokens;
  s.chunk = prm->chunk_tokens;
  const uint64_t ring_bytes = (uint64_t)s.ring * s.row_bytes;
  s.ring_at_peer = (dispatch ? prm->dispatch_recv_ring : prm->combine_recv_ring) + (uint64_t)(c * n + me) * ring_bytes;
  s.stage = (dispatch ? prm->dispatch_send_stage : prm->combine_send_stage) + (uint64_t)(c * n + dest) * ring_bytes;
  s.tail_sig = signal_offset(prm, dispatch ? si.dispatch_tail(c, me) : si.combine_tail(c, me));
  s.credit_sig = signal_offset(prm, dispatch ? si.dispatch_credit(c, dest) : si.combine_credit(c, dest));
  s.pos = *state_word(prm, dispatch ? STATE_DISPATCH_SENT : STATE_COMBINE_SENT, c, dest);
  s.run_start = s.pos;
  s.announced = s.pos;
  s.credit = 0;
  s.w = w;
  s.warps = warps;
  s.bar = 1 + dest;
  s.status = status;
  return s;
}

// A group of warps (this is warp w of them): this channel's tokens for `dest`, in token order, as dispatch rows
// (payload, scales, meta). Each 32-token window's rows go out in pieces; the warps share a piece's rows.
__device__ int dispatch_send(const DeviceView* view, const MoeParams* prm, int c, int dest, int w, int warps,
                             int* status, const char* x, const float* scales, const int64_t* topk,
                             const float* weights, int num_tokens, uint64_t call_seq) {
  const uint32_t lane = lane_id();
  const int n = prm->head.nranks, k = prm->head.top_k, me = prm->head.rank;
  GroupSender s = make_sender(view, prm, c, dest, true, w, warps, status);
  const int32_t count = reinterpret_cast<const int32_t*>(prm->channel_count)[c * n + dest];
  int prior = OK;
  if (w == 0) {
    if (lane == 0) {
      const uint64_t word = signal_offset(prm, signal_index(prm).dispatch_count((int)(call_seq & 1), c, me));
      prior = signal(s.peer, word, SIGNAL_SET, call_seq << 32 | (uint32_t)count);
    }
    prior = __shfl_sync(0xffffffffu, prior, 0);
    if (count == 0) return prior;  // no piece follows, so no barrier waits for warp 0's news
  }
  const int32_t* slot = reinterpret_cast<const int32_t*>(prm->token_slot);
  const int t0 = channel_start(num_tokens, prm->num_channels, c);
  const int t1 = channel_end(num_tokens, prm->num_channels, c);
  for (int base = t0; base < t1; base += 32) {
    const int t = base + (int)lane;
    const uint32_t mask = __ballot_sync(0xffffffffu, t < t1 && slot[(int64_t)t * n + dest] >= 0);
    const uint32_t m = __popc(mask);
    for (uint32_t i = 0; i < m;) {
      const uint32_t rows = s.piece(m - i);
      int st = s.begin(rows, prior);
      if (st != OK) return st;
      for (uint32_t j = (uint32_t)w; j < rows; j += (uint32_t)warps) {
        const int token = base + nth_set_bit(mask, (int)(i + j));
        char* row = s.slot(j);
        warp_copy16(row, x + (int64_t)token * prm->payload_bytes, prm->payload_bytes, lane);
        if (prm->scales_per_row > 0) {
          warp_copy4(row + prm->scales_offset, scales + (int64_t)token * prm->scales_per_row, prm->scales_per_row,
                     lane);
        }
        int32_t* meta = reinterpret_cast<int32_t*>(row + prm->meta_offset);
        if (lane == 0) {
          meta[0] = token;
          meta[1] = me;
        }
        if (lane < (uint32_t)k) {
          meta[2 + lane] = (int32_t)topk[(int64_t)token * k + lane];
          reinterpret_cast<float*>(meta + 2 + k)[lane] = weights[(int64_t)token * k + lane];
        }
      }
      s.end(rows);
      i += rows;
    }
  }
  const int st = s.finish();
  if (w == 0 && lane == 0) *state_word(prm, STATE_DISPATCH_SENT, c, dest) = s.pos;
  return st;
}

// What warp 0 of a group tells the others, in shared memory, between two of the group's barriers.
// Each field is written before one barrier and read between it and the next, so no reader sees a later write.
struct GroupNews {
  int start;        // status of the counts
  int32_t count;    // rows the channel receives from the group's source
  int64_t base;     // the channel's first output row
  int status;       // status of the latest batch
  uint32_t batch;   // rows of the latest batch: the group copies them
};

// A group of warps (this is warp w of them): the rows `src` sends this channel, copied out of the ring to the outputs
// at their (source, token) place. Warp 0 reads the counts, waits for rows and grants them back once the group has
// copied them; the group shares each batch that arrived.
__device__ int dispatch_receive(const DeviceView* view, const MoeParams* prm, int c, int src, int w, int warps,
                                GroupNews* news, uint64_t call_seq) {
  const uint32_t lane = lane_id();
  const int n = prm->head.nranks, channels = prm->num_channels, k = prm->head.top_k, me = prm->head.rank;
  const int local = prm->head.num_local_experts;
  const Local l = local_of(view);
  const SignalIndex si = signal_index(prm);
  const int parity = (int)(call_seq & 1);
  const uint64_t want = call_seq << 32;
  const int bar = 1 + src;
  // Every (source, channel) count: this one's output place is after all sources before it and all channels of its
  // source before it. Counts of a call are SET with the call's sequence in the high word (two buffers by parity:
  // a peer is at most one call ahead). Warp 0 reads them and tells the group.
  if (w == 0) {
    int64_t base = 0, total = 0;
    int32_t mine = 0;
    int failed = 0;
    for (int i = (int)lane; i < channels * n; i += 32) {
      const int s2 = i / channels, c2 = i % channels;
      uint64_t v = 0;
      const uint64_t sig = signal_offset(prm, si.dispatch_count(parity, c2, s2));
      const uint64_t start = global_timer_ns();
      int st = wait_until(l, sig, CMP_GE, want, &v);
      atomicAdd(reinterpret_cast<unsigned long long*>(prm->wait_ns) + s2, (unsigned long long)(global_timer_ns() - start));
      if (st != OK) failed = 1;
      const int32_t cnt = (int32_t)(uint32_t)v;
      total += cnt;
      if (s2 < src || (s2 == src && c2 < c)) base += cnt;
      if (s2 == src && c2 == c) mine = cnt;
    }
    failed = __any_sync(0xffffffffu, failed);
    for (int o = 16; o > 0; o >>= 1) {
      base += __shfl_xor_sync(0xffffffffu, base, o);
      total += __shfl_xor_sync(0xffffffffu, total, o);
      mine += __shfl_xor_sync(0xffffffffu, mine, o);
    }
    if (lane == 0) {
      news->start = failed ? ERR_TIMEOUT : OK;
      news->base = base;
      news->count = mine;
      if (!failed) {
        reinterpret_cast<int32_t*>(prm->recv_channel_offset)[c * n + src] = (int32_t)base;
        reinterpret_cast<int32_t*>(prm->recv_channel_count)[c * n + src] = mine;
        if (c == 0 && src == 0) *reinterpret_cast<int32_t*>(prm->recv_total) = (int32_t)total;
      }
    }
  }
  group_sync(bar, warps);
  if (news->start != OK) return news->start;
  const int64_t base = news->base;
  const int32_t mine = news->count;
  const Peer sender = with_channel(peer_of(view, src), c);
  const uint32_t row_bytes = prm->dispatch_row_bytes;
  const uint32_t ring = prm->ring_tokens;
  const char* ring_base = l.heap + prm->dispatch_recv_ring + (uint64_t)(c * n + src) * ring * row_bytes;
  const uint64_t tail_sig = signal_offset(prm, si.dispatch_tail(c, src));
  const uint64_t credit_sig = signal_offset(prm, si.dispatch_credit(c, me));
  uint64_t* consumed_word = state_word(prm, STATE_DISPATCH_CONSUMED, c, src);
  uint64_t head = *consumed_word;
  char* out_x = reinterpret_cast<char*>(prm->recv_x);
  float* out_scales = reinterpret_cast<float*>(prm->recv_scales);
  int32_t* out_idx = reinterpret_cast<int32_t*>(prm->recv_topk_idx);
  float* out_w = reinterpret_cast<float*>(prm->recv_topk_weights);
  int32_t* out_src = reinterpret_cast<int32_t*>(prm->recv_src);
  int32_t* expert_counts = reinterpret_cast<int32_t*>(prm->local_expert_counts);
  int32_t done = 0;
  int granted = OK;  // warp 0: the last grant's status
  uint64_t given = head;  // warp 0: rows granted back (cumulative)
  const uint32_t batch = grant_batch(prm, 0);
  while (done < mine) {
    if (w == 0) {
      uint64_t tail = 0;
      int st = granted;
      if (st == OK) st = warp_wait_counter(l, prm, tail_sig, head + 1, src, &tail);
      if (lane == 0) {
        news->status = st;
        news->batch = (uint32_t)min((uint64_t)(mine - done), tail - head);
      }
    }
    group_sync(bar, warps);
    const int st = news->status;
    const uint32_t avail = news->batch;
    if (st != OK) return st;
    for (uint32_t j = (uint32_t)w; j < avail; j += (uint32_t)warps) {
      const char* row = ring_base + ((head + j) % ring) * row_bytes;
      const int64_t at = base + done + j;
      warp_copy16(out_x + at * prm->payload_bytes, row, prm->payload_bytes, lane);
      if (prm->scales_per_row > 0) {
        warp_copy4(out_scales + at * prm->scales_per_row, row + prm->scales_offset, prm->scales_per_row, lane);
      }
      const int32_t* meta = reinterpret_cast<const int32_t*>(row + prm->meta_offset);
      if (lane == 0) {
        out_src[2 * at] = meta[1];
        out_src[2 * at + 1] = meta[0];
      }
      if (lane < (uint32_t)k) {
        const int32_t e = meta[2 + lane];
        const bool here = e >= 0 && e / local == me;
        out_idx[at * k + lane] = here ? e - me * local : -1;
        out_w[at * k + lane] = here ? reinterpret_cast<const float*>(meta + 2 + k)[lane] : 0.0f;
        if (here) atomicAdd(expert_counts + (e - me * local), 1);
      }
    }
    // The group's reads of these rows are done before warp 0 hands the slots back.
    group_sync(bar, warps);
    if (w == 0) {
      if (lane == 0 && (head + avail - given >= batch || done + (int32_t)avail == mine)) {
        granted = grant(sender, credit_sig, head + avail, head + avail - given);
        given = head + avail;
      }
      granted = __shfl_sync(0xffffffffu, granted, 0);
    }
    head += avail;
    done += (int32_t)avail;
  }
  if (w == 0 && lane == 0) *consumed_word = head;
  return w == 0 ? granted : OK;
}

}  // namespace moe_kernels
using namespace moe_kernels;

// One thread: the next dispatch's sequence number (the word starts at 0). Launched before every dispatch on the
// same stream, so a CUDA graph that captured both makes a new call on every replay; a number passed from the host
// would be captured once and replayed stale, and the peers would take old counts for new ones.
extern "C" __global__ void gda4j_moe_next_call(uint64_t* call_seq_word) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *call_seq_word += 1;
}

// Dispatch. Grid: 2 * num_channels blocks of 32 * nranks * warps_per_peer threads, a group of warps_per_peer warps
// per rank. In block 2c (channel c's sender) group r sends the channel's tokens to rank r; in block 2c + 1 (its
// receiver) group s receives what rank s sends in the channel. A group of several warps meets at named barrier
// 1 + its rank, and a block has 15 of those: HighThroughputRank gives more than one warp per peer only up to 8 ranks.
// local_expert_counts is zeroed before (gda4j_moe_zero).
// `*call_seq_word` (raised by gda4j_moe_next_call just before, in stream order) counts this rank's dispatches from 1;
// every rank's n-th dispatch uses n.
extern "C" __global__ void __launch_bounds__(512) gda4j_moe_dispatch(const DeviceView* view, const MoeParams* prm,
                                                                      const char* x, const float* scales,
                                                                      const int64_t* topk, const float* weights,
                                                                      int num_tokens, const uint64_t* call_seq_word,
                                                                      int warps_per_peer) {
  __shared__ int status[MAX_RANKS];
  __shared__ GroupNews news[MAX_RANKS];
  const uint64_t call_seq = *call_seq_word;
  const int warp = threadIdx.x / 32;
  const int n = prm->head.nranks;
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  if (warp >= n * warps_per_peer) return;
  const int c = (int)(blockIdx.x >> 1);
  const int peer = warp / warps_per_peer, w = warp % warps_per_peer;
  if ((blockIdx.x & 1) == 0) {
    dispatch_send(view, prm, c, peer, w, warps_per_peer, &status[peer], x, scales, topk, weights, num_tokens, call_seq);
  } else {
    dispatch_receive(view, prm, c, peer, w, warps_per_peer, &news[peer], call_seq);
  }
}

// A named namespace, not an anonymous one: nvcc names the static __shared__ variables of functions in an anonymous
// namespace with a hash of the file's absolute path, which would make the PTX depend on where the repository lives.
namespace moe_kernels {

// A group of warps (this is warp w of them): the rows this rank received from `dest` in this channel (contiguous in
// y), sent back in order.
__device__ int combine_send(const DeviceView* view, const MoeParams* prm, int c, int dest, int w, int warps,
                            int* status, const uint16_t* y) {
  const uint32_t lane = lane_id();
  const int n = prm->head.nranks;
  GroupSender s = make_sender(view, prm, c, dest, false, w, warps, status);
  const int32_t first = reinterpret_cast<const int32_t*>(prm->recv_channel_offset)[c * n + dest];
  const int32_t count = reinterpret_cast<const int32_t*>(prm->recv_channel_count)[c * n + dest];
  for (uint32_t i = 0; i < (uint32_t)count;) {
    const uint32_t rows = s.piece((uint32_t)count - i);
    int st = s.begin(rows);
    if (st != OK) return st;
    for (uint32_t j = (uint32_t)w; j < rows; j += (uint32_t)warps) {
      warp_copy16(s.slot(j), y + (int64_t)(first + i + j) * prm->head.hidden, prm->combine_row_bytes, lane);
    }
    s.end(rows);
    i += rows;
  }
  const int st = s.finish();
  if (w == 0 && lane == 0) *state_word(prm, STATE_COMBINE_SENT, c, dest) = s.pos;
  return st;
}

__device__ __forceinline__ void receivers_barrier(int warps) {
  asm volatile("bar.sync 1, %0;" ::"r"(warps * 32) : "memory");
}

// The combine_warps receiving warps of a block: each reduces one token at a time, summing its rows over the ranks in
// increasing rank order in FP32 (acc = +0.0, then acc += row[r]) and rounding once to BF16: the order
// io.gda4j.moe.check.MoeReference documents, so the result does not depend on which row arrived first.
__device__ int combine_receive(const DeviceView* view, const MoeParams* prm, int c, int wi, int num_tokens,
                               uint16_t* out) {
  __shared__ int32_t consumed[MAX_RANKS];
  __shared__ int failed;
  const uint32_t lane = lane_id();
  const int n = prm->head.nranks, warps = prm->combine_warps, hidden = prm->head.hidden, me = prm->head.rank;
  const uint32_t ring = prm->ring_tokens, row_bytes = prm->combine_row_bytes;
  const Local l = local_of(view);
  const SignalIndex si = signal_index(prm);
  if (wi == 0 && lane < (uint32_t)n) consumed[lane] = 0;
  if (wi == 0 && lane == 0) failed = 0;
  receivers_barrier(warps);
  const int t0 = channel_start(num_tokens, prm->num_channels, c);
  const int t1 = channel_end(num_tokens, prm->num_channels, c);
  const int32_t* slots = reinterpret_cast<const int32_t*>(prm->token_slot);
  int32_t granted = 0;  // by thread (wi 0, lane r): rows of rank r granted back so far
  const int32_t batch = (int32_t)grant_batch(prm, warps);  // the rest go back after the last round
  const int rounds = (t1 - t0 + warps - 1) / warps;
  for (int round = 0; round < rounds; ++round) {
    const int t = t0 + round * warps + wi;
    // Warp-uniform (the sum below shuffles): another warp may raise `failed` while this warp's lanes read it.
    if (t < t1 && __all_sync(0xffffffffu, failed == 0)) {
      int st = OK;
      for (int r = 0; r < n && st == OK; ++r) {
        const int32_t slot = slots[(int64_t)t * n + r];
        if (slot < 0) continue;
        const uint64_t head = *state_word(prm, STATE_COMBINE_CONSUMED, c, r);
        uint64_t tail;
        st = warp_wait_counter(l, prm, signal_offset(prm, si.combine_tail(c, r)), head + slot + 1, r, &tail);
      }
      if (st != OK) {
        if (lane == 0) failed = 1;
      } else {
        // Lane r < n holds the token's row from rank r (null where r sent none), found once per token instead of
        // once per 256 channels.
        const char* my_row = nullptr;
        if (lane < (uint32_t)n) {
          const int32_t slot = slots[(int64_t)t * n + lane];
          if (slot >= 0) {
            const uint64_t head = *state_word(prm, STATE_COMBINE_CONSUMED, c, (int)lane);
            my_row = l.heap + prm->combine_recv_ring + (uint64_t)(c * n + lane) * ring * row_bytes +
                     ((head + slot) % ring) * row_bytes;
          }
        }
        // Warp-uniform trip count (the shuffles need every lane): hidden is a multiple of 128, not of 256.
        for (int h0 = 0; h0 < hidden; h0 += 256) {
          const int h = h0 + (int)lane * 8;
          const bool mine = h < hidden;
          float acc[8];
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[e] = 0.0f;
          // A batch of ranks' rows is loaded before any is summed (memory latency overlaps); the sums still go in
          // increasing rank order, the documented one.
          constexpr int BATCH = 4;
          for (int r0 = 0; r0 < n; r0 += BATCH) {
            uint4 v[BATCH];
            bool use[BATCH];
#pragma unroll
            for (int i = 0; i < BATCH; ++i) {
              const char* row =
                  reinterpret_cast<const char*>(__shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(my_row), (r0 + i) & 31));
              use[i] = r0 + i < n && row != nullptr && mine;
              if (use[i]) v[i] = *reinterpret_cast<const uint4*>(row + 2 * (uint64_t)h);
            }
#pragma unroll
            for (int i = 0; i < BATCH; ++i) {
              if (!use[i]) continue;
              const uint32_t w[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                acc[2 * e] += bf16_to_float((uint16_t)(w[e] & 0xffff));
                acc[2 * e + 1] += bf16_to_float((uint16_t)(w[e] >> 16));
              }
            }
          }
          if (mine) *reinterpret_cast<uint4*>(out + (int64_t)t * hidden + h) = pack_bf16x8(acc);
        }
        __syncwarp();
        if (lane < (uint32_t)n && slots[(int64_t)t * n + lane] >= 0) atomicAdd(&consumed[lane], 1);
      }
    }
    receivers_barrier(warps);
    if (wi == 0 && lane < (uint32_t)n && failed == 0) {
      const int32_t now = *reinterpret_cast<volatile int32_t*>(&consumed[lane]);
      if (now - granted >= batch) {
        const uint64_t head = *state_word(prm, STATE_COMBINE_CONSUMED, c, (int)lane);
        if (grant(with_channel(peer_of(view, (int)lane), c), signal_offset(prm, si.combine_credit(c, me)),
                  head + now, now - granted) != OK) {
          failed = 1;
        }
        granted = now;
      }
    }
  }
  receivers_barrier(warps);
  if (failed != 0) return ERR_TIMEOUT;
  if (wi == 0 && lane < (uint32_t)n) {
    const int32_t now = consumed[lane];
    uint64_t* head = state_word(prm, STATE_COMBINE_CONSUMED, c, lane);
    if (now > granted) {
      grant(with_channel(peer_of(view, (int)lane), c), signal_offset(prm, si.combine_credit(c, me)), *head + now,
            now - granted);
    }
    *head += reinterpret_cast<const int32_t*>(prm->channel_count)[c * n + lane];
  }
  return OK;
}

}  // namespace moe_kernels
using namespace moe_kernels;

// Combine. Grid: 2 * num_channels blocks of 32 * max(nranks * warps_per_peer, combine_warps) threads. In block 2c
// group r (warps_per_peer warps, as in dispatch) returns to rank r the rows this rank received from it in channel c
// (y, BF16, in dispatch's output order); in block 2c + 1 the first combine_warps warps reduce this rank's tokens of
// the channel into `out` (num_tokens x hidden BF16). Needs the layout and the dispatch before it.
extern "C" __global__ void __launch_bounds__(512) gda4j_moe_combine(const DeviceView* view, const MoeParams* prm,
                                                                      const uint16_t* y, uint16_t* out,
                                                                      int num_tokens, int warps_per_peer) {
  const int warp = threadIdx.x / 32;
  const int n = prm->head.nranks;
  if (prm->head.magic != MoeParamsDescriptor::PARAMS_MAGIC) return;
  const int c = (int)(blockIdx.x >> 1);
  if ((blockIdx.x & 1) == 0) {
    __shared__ int status[MAX_RANKS];
    if (warp < n * warps_per_peer) {
      combine_send(view, prm, c, warp / warps_per_peer, warp % warps_per_peer, warps_per_peer,
                   &status[warp / warps_per_peer], y);
    }
  } else if (warp < prm->combine_warps) {
    combine_receive(view, prm, c, warp, num_tokens, out);
  }
}

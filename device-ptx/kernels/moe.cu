// MoE expert parallelism for large batches (io.gda4j.moe): layout, dispatch and combine. Two thread blocks per
// channel (a contiguous range of every rank's tokens): an even block that sends, an odd block that receives. All
// blocks of all ranks must be resident at once, since they wait for each other (MoeBuffer checks the grid against the
// GPU). Blocks are at most 512 threads (__launch_bounds__(512)), which leaves a thread 128 registers: with 1024-thread
// blocks a thread got 64, and the row copies spilled each loaded vector to local memory before storing it, which
// made every warp copy a chain of round trips (one rank alone moved 37 GB/s on an H100).
// gda4j/moe/moe.cuh has the channel protocol, gda4j/moe/params.cuh the parameter block.
#include <gda4j/gda4j.cuh>
#include <gda4j/moe/moe.cuh>

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
// 1 + its rank, and a block has 15 of those: MoeRank gives more than one warp per peer only up to 8 ranks.
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
// io.gda4j.moe.MoeReference documents, so the result does not depend on which row arrived first.
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
        if (grant(with_channel(peer_of(view, (int)lane), c), signal_offset(prm, si.combine_credit(c, me)), head + now,
                  now - granted) != OK) {
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
      grant(with_channel(peer_of(view, (int)lane), c), signal_offset(prm, si.combine_credit(c, me)), *head + now, now - granted);
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

// ---- Direct worlds: every pair of ranks is p2p or self (MoeBuffer decides once, for every process).
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

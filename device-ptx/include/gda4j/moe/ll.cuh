// gda4j/moe/ll.cuh: what the low-latency MoE kernels (kernels/moe_ll.cu) share: the addresses of a buffer's
// sections and signal words (io.gda4j.moe.ll.LowLatencySizing draws the layout), and the warp-wide FP8 cast.
//
// Counters and flags (u64 in the heap, SET, never reset: a call's words carry its sequence number, so a stale value
// from an older call on the same buffer is simply too small):
//   dispatchCount[buffer][local expert][source]  at the expert's rank; SET by the source to (seq << 32 | rows) after
//                                                its last row to that expert (fence, then the signal)
//   combineFlag[buffer][expert]                   at the source; SET to seq << 1 | pull by the expert's rank after
//                                                its rows (pull: it left them in its combine input to be read)
//   dispatchBatch[buffer][source]                 a batched pair's word in place of the counts: SET by the source
//                                                to (seq << 32 | rows) after its count table and all its rows (one
//                                                put carries both: the table heads the rows, on both sides)
//   combineBatch[buffer][expert rank]             a batched pair's word in place of the flags: SET by the expert's
//                                                rank to seq << 1 after all its rows for this source
// A pair is batched where gda4j::prefers_few_puts (the proxy, a driver call per trigger): one put per (expert,
// source) made a 128-token call take a millisecond there.
// seq[buffer] lives in the rank's device memory and is raised by the route kernel of each dispatch on that buffer,
// so a CUDA graph replaying dispatch and combine uses a new sequence number each time without the host.
#pragma once
#include <stdint.h>
#include "../gda4j.cuh"
#include "moe.cuh"
#include "ll_params.cuh"
#include "fp8_block.cuh"

namespace gda4j {
namespace moe {

constexpr int32_t LL_DTYPE_FP8_E4M3 = DTYPE_FP8_E4M3;  // io.gda4j.moe.tensor.ElementType codes (params_header.cuh)

// One buffer of one rank: heap offsets (valid on every rank) and this rank's device state.
struct LlBuffer {
  const LlParams* p;
  int buf;

  __device__ __forceinline__ uint64_t heap(uint64_t section) const {
    return p->region + (uint64_t)buf * p->buffer_bytes + section;
  }
  // Row index of slot `slot` of local expert `le` in the expert-major receive layout.
  __device__ __forceinline__ uint64_t row(int le, int slot) const { return (uint64_t)le * p->slots_per_expert + slot; }
  __device__ __forceinline__ uint64_t recv_x(uint64_t row) const { return heap(p->recv_x) + row * p->payload_bytes; }
  __device__ __forceinline__ uint64_t recv_scales(uint64_t row) const {
    return heap(p->recv_scales) + row * 4ull * p->scales_per_row;
  }
  __device__ __forceinline__ uint64_t recv_src(uint64_t row) const { return heap(p->recv_src) + row * 4ull * LL_SRC_INTS; }
  // The combine's landing row of this rank's send row `send_row` (ll_params.cuh: the send order).
  __device__ __forceinline__ uint64_t combine_recv(int send_row) const {
    return heap(p->combine_recv) + (uint64_t)send_row * 2ull * p->head.hidden;
  }
  // Staging (msg_bytes != 0 only; io.gda4j.moe.ll.LowLatencySizing draws it). Source `src`'s part of the landing
  // messages at the expert's rank is its count table (table_msgs slots, a batched pair's) and then its messages;
  // message i (ibgda: i = local expert x max_tokens + slot; a batched pair: i = the row's place in the source's
  // packed rows):
  __device__ __forceinline__ uint64_t table_msgs() const {
    return ll_table_msgs(p->head.num_local_experts, p->msg_bytes);
  }
  __device__ __forceinline__ uint64_t recv_part(int src) const {
    return heap(p->recv_msg) +
           (uint64_t)src * (table_msgs() + (uint64_t)p->head.num_local_experts * p->max_tokens) * p->msg_bytes;
  }
  __device__ __forceinline__ uint64_t recv_msg(int src, uint64_t i) const {
    return recv_part(src) + (table_msgs() + i) * p->msg_bytes;
  }
  // This rank's message of send row `send_row`, whose expert is on rank `dest`. The send order's rows to each rank
  // are consecutive; each rank's are preceded by a gap of table_msgs slots for the count table it is sent, so one
  // put moves table and rows together into the receiver's part: slot send_row + (dest + 1) x table_msgs.
  __device__ __forceinline__ uint64_t send_msg(int send_row, int dest) const {
    return heap(p->send_msg) + ((uint64_t)send_row + (uint64_t)(dest + 1) * table_msgs()) * p->msg_bytes;
  }
  // Gathered rows (stage_row_bytes != 0 only): source `src`'s token `t`, stored once by the source for all of the
  // token's experts on this rank (payload, then FP8 scales), copied out by the receive half for each of them.
  __device__ __forceinline__ uint64_t token_stage(int src, int t) const {
    return heap(p->token_stage) + ((uint64_t)src * p->max_tokens + t) * (uint64_t)p->stage_row_bytes;
  }
  // The combine input (y in the heap): row `row` of the expert-major layout, read by the sources where they pull and
  // put from where they are staged.
  __device__ __forceinline__ uint64_t combine_input(uint64_t row) const {
    return heap(p->combine_input) + row * 2ull * p->head.hidden;
  }
  // Batched pairs (gda4j::prefers_few_puts): the count table this rank fills for rank r (entry le: the first send
  // row and the rows of expert le, from its last writer), the table it sends r (to_rank: running sums, entry le the
  // rows to experts 0..le, in the gap before the rows to r, whose first send row is `first_row`) and the one source
  // s sent here (from_source: the head of its part), each [num_local_experts] u64; the combine's rows for source s,
  // i in the source's send order from its first row to this rank.
  __device__ __forceinline__ uint64_t table_filled(int r) const {
    return heap(p->tables) + (uint64_t)r * p->head.num_local_experts * 8ull;
  }
  __device__ __forceinline__ uint64_t table_to_rank(int r, int first_row) const {
    return heap(p->send_msg) + ((uint64_t)first_row + (uint64_t)r * table_msgs()) * p->msg_bytes;
  }
  __device__ __forceinline__ uint64_t table_from_source(int s) const { return recv_part(s); }
  __device__ __forceinline__ uint64_t combine_stage(int s, uint64_t i) const {
    const uint64_t per_source = (uint64_t)p->max_tokens * min(p->head.top_k, p->head.num_local_experts);
    return heap(p->combine_stage) + ((uint64_t)s * per_source + i) * 2ull * p->head.hidden;
  }
  __device__ __forceinline__ uint64_t dispatch_batch(int src) const {
    const LlSignalIndex si{p->head.num_local_experts, p->head.nranks, p->head.num_experts};
    return p->signals + 8ull * si.dispatch_batch(buf, src);
  }
  __device__ __forceinline__ uint64_t combine_batch(int expert_rank) const {
    const LlSignalIndex si{p->head.num_local_experts, p->head.nranks, p->head.num_experts};
    return p->signals + 8ull * si.combine_batch(buf, expert_rank);
  }
  __device__ __forceinline__ uint64_t dispatch_count(int le, int src) const {
    const LlSignalIndex si{p->head.num_local_experts, p->head.nranks, p->head.num_experts};
    return p->signals + 8ull * si.dispatch_count(buf, le, src);
  }
  __device__ __forceinline__ uint64_t combine_flag(int expert) const {
    const LlSignalIndex si{p->head.num_local_experts, p->head.nranks, p->head.num_experts};
    return p->signals + 8ull * si.combine_flag(buf, expert);
  }
  // The tagged protocol (ll_tagged.cuh): source `src`'s count vector at this rank, its row i, and the combine flag
  // expert rank `r` SETs at every rank.
  __device__ __forceinline__ uint64_t tag_counts(int src) const {
    return heap(p->tag_counts) + (uint64_t)src * p->tag_count_words * 8ull;
  }
  __device__ __forceinline__ uint64_t tag_row(int src, int i) const {
    return heap(p->tag_rows) + ((uint64_t)src * p->max_tokens + i) * p->tag_row_words * 8ull;
  }
  __device__ __forceinline__ uint64_t combine_rank_flag(int r) const {
    const LlSignalIndex si{p->head.num_local_experts, p->head.nranks, p->head.num_experts};
    return p->signals + 8ull * si.combine_rank_flag(buf, r);
  }
  __device__ __forceinline__ char* state() const { return reinterpret_cast<char*>(p->buffer_state + buf * p->state_bytes); }
  __device__ __forceinline__ int32_t* route_slot() const { return reinterpret_cast<int32_t*>(state() + p->route_slot); }
  __device__ __forceinline__ int32_t* send_count() const { return reinterpret_cast<int32_t*>(state() + p->send_count); }
  __device__ __forceinline__ int32_t* send_base() const { return reinterpret_cast<int32_t*>(state() + p->send_base); }
  // send_done's copy for a call of sequence number `seq`: [num_experts] rows out per expert, then [nranks] experts
  // whose count is out per rank; after both copies, the fused route's arrival counter.
  __device__ __forceinline__ int32_t* send_done(uint64_t seq) const {
    return reinterpret_cast<int32_t*>(state() + p->send_done) + (int)(seq & 1) * (p->head.num_experts + p->head.nranks);
  }
  __device__ __forceinline__ int32_t* route_arrivals() const {
    return send_done(0) + 2 * (p->head.num_experts + p->head.nranks);
  }
  __device__ __forceinline__ int32_t* recv_offset_src() const {
    return reinterpret_cast<int32_t*>(state() + p->recv_offset_src);
  }
  __device__ __forceinline__ int32_t* combine_done() const {
    return reinterpret_cast<int32_t*>(state() + p->combine_done);
  }
  __device__ __forceinline__ int32_t* recv_count_src() const {
    return reinterpret_cast<int32_t*>(state() + p->recv_count_src);
  }
  __device__ __forceinline__ int32_t* recv_count() const { return reinterpret_cast<int32_t*>(state() + p->recv_count); }
  __device__ __forceinline__ uint16_t* combined() const { return reinterpret_cast<uint16_t*>(state() + p->combined); }
  __device__ __forceinline__ uint64_t* combine_ready() const {
    return reinterpret_cast<uint64_t*>(state() + p->combine_ready);
  }
  __device__ __forceinline__ uint64_t* seq() const { return reinterpret_cast<uint64_t*>(p->seq) + buf; }
  __device__ __forceinline__ uint64_t* status() const { return reinterpret_cast<uint64_t*>(p->status) + buf; }
};

// Lane l's 16 channels of a 512-channel chunk (channels 16l .. 16l + 15, BF16 little-endian in lo and hi): eight
// lanes share one 128-channel block. Returns the 16 FP8 codes (channel 16l in the low byte of .x) and the block's
// scale (the same in its eight lanes): steps 1-5 of fp8_block.cuh, with step 1 as a butterfly of fmaxf over the
// eight lanes (exact in any order). Every lane of the warp must call it (the shuffles), with or without channels.
__device__ __forceinline__ uint4 lane_quantize16(uint4 lo, uint4 hi, bool power_of_two, float* scale_out) {
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    amax = fmaxf(amax, fabsf(ll_bf16_to_float((uint16_t)(w[i] & 0xffff))));
    amax = fmaxf(amax, fabsf(ll_bf16_to_float((uint16_t)(w[i] >> 16))));
  }
  for (int o = 4; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  const float scale = ll_block_scale(amax, power_of_two);
  *scale_out = scale;
  uint32_t q[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    q[i] = (uint32_t)ll_quantize((uint16_t)(w[2 * i] & 0xffff), scale) |
           (uint32_t)ll_quantize((uint16_t)(w[2 * i] >> 16), scale) << 8 |
           (uint32_t)ll_quantize((uint16_t)(w[2 * i + 1] & 0xffff), scale) << 16 |
           (uint32_t)ll_quantize((uint16_t)(w[2 * i + 1] >> 16), scale) << 24;
  }
  return make_uint4(q[0], q[1], q[2], q[3]);
}

// One thread's wait for this rank's word at `sig` to reach `want`, the time added to wait_ns[peer] when `account`
// (false where several threads wait for the same word, so that a wait counts once).
__device__ __forceinline__ int ll_wait(const Local& me, const LlParams* p, uint64_t sig, uint64_t want, int peer,
                                       uint64_t* seen, bool account = true) {
  const uint64_t* word = reinterpret_cast<const uint64_t*>(me.heap + sig);
  uint64_t v = load_acquire_sys(word);
  int st = OK;
  if (v < want) {
    const uint64_t start = global_timer_ns();
    st = wait_until(me, sig, CMP_GE, want, &v);
    if (account) {
      atomicAdd(reinterpret_cast<unsigned long long*>(p->wait_ns) + peer, (unsigned long long)(global_timer_ns() - start));
    }
  }
  *seen = v;
  return st;
}

}  // namespace moe
}  // namespace gda4j

// gda4j/moe/params.cuh: the MoE parameter block, mirrored by io.gda4j.moe.ht.MoeParamsDescriptor (same names, same
// offsets; MoeParamsLayoutTest compiles this header with g++ and compares). Written once per rank by MoeBuffer; every
// MoE kernel takes a pointer to it. Heap offsets address the symmetric heap; the u64 pointers point into the rank's
// own device memory. Plain C++, so g++ can print it.
//
//       0  hdr  head  (MoeParamsHeader, params_header.cuh: magic, nranks, rank, hidden, dtype, top_k,
//                      num_experts, num_local_experts)
//      32  i32  num_channels
//      36  i32  max_tokens
//      40  i32  chunk_tokens
//      44  i32  ring_tokens
//      48  i32  payload_bytes
//      52  i32  scales_per_row
//      56  i32  scales_offset
//      60  i32  meta_offset
//      64  i32  dispatch_row_bytes
//      68  i32  combine_row_bytes
//      72  i32  combine_warps
//      80  u64  dispatch_recv_ring  (heap offset)
//      88  u64  dispatch_send_stage  (heap offset)
//      96  u64  combine_recv_ring  (heap offset)
//     104  u64  combine_send_stage  (heap offset)
//     112  u64  signals  (heap offset)
//     120  u64  token_slot  (device address)
//     128  u64  channel_count  (device address)
//     136  u64  tokens_per_rank  (device address)
//     144  u64  tokens_per_expert  (device address)
//     152  u64  layout_status  (device address)
//     160  u64  state  (device address)
//     168  u64  wait_ns  (device address)
//     176  u64  recv_channel_offset  (device address; direct worlds: [C][N dest], where this rank's rows begin)
//     184  u64  recv_channel_count  (device address)
//     192  u64  recv_total  (device address)
//     200  u64  local_expert_counts  (device address)
//     208  u64  recv_x  (device address)
//     216  u64  recv_scales  (device address)
//     224  u64  recv_topk_idx  (device address)
//     232  u64  recv_topk_weights  (device address)
//     240  u64  recv_src  (device address)
//     248  u64  combined  (device address)
//     256  u64  direct_recv  (heap offset; direct worlds: recv_x .. recv_src, laid out as in device memory)
//     264  u64  combine_landing  (heap offset; direct worlds: [N expert rank][max_tokens][combine_row_bytes],
//                                  or a pulling combine's input)
//     272  u64  direct_recv_bytes  (direct worlds: bytes of one region of the received tensors; two regions, by the
//                                  dispatch's parity)
//     280  u64  exchange  (device address; direct worlds: [2 parity] blocks of ExchangeIndex words, the layout
//                          exchange's results)
//     288  u64  exchange_host  (device address of mapped host memory; direct worlds: [2 parity] host blocks: the u64
//                               exchange sequence, written last, then the block's words)
//     296  u64  expert_table  (heap offset; direct worlds: [2 parity][N source][num_local_experts] i32, each
//                              source's tokens per local expert, written by the source)
//     304  u64  direct_state  (device address; direct worlds: DSTATE_WORDS u64 words)
//     312  u64  ce_landing  (heap offset; copy-engine worlds: [N expert rank][max_tokens][combine_row_bytes])
//     320  u64  stage_x  (device address; copy-engine worlds: [N dest][max_tokens][payload_bytes])
//     328  u64  stage_scales  (device address; copy-engine worlds: [N dest][max_tokens][scales_per_row] f32)
//     336  u64  stage_topk_idx  (device address; copy-engine worlds: [N dest][max_tokens][top_k] i32)
//     344  u64  stage_topk_weights  (device address; copy-engine worlds: [N dest][max_tokens][top_k] f32)
//     352  u64  stage_src  (device address; copy-engine worlds: [N dest][max_tokens][2] i32)
//    360  (length)
// With host transfers (the copy engines over the proxy) direct_state and stage_* point into the rank's heap instead,
// and the expert table is followed by [2 parity][N dest][num_local_experts] i32: this rank's share for each peer,
// put from there.
#pragma once
#include <stdint.h>
#include <stddef.h>
#include "params_header.cuh"

#if defined(__CUDACC__)
#define GDA4J_MOE_FN __host__ __device__ __forceinline__
#else
#define GDA4J_MOE_FN inline
#endif

namespace gda4j {
namespace moe {

struct MoeParams {
  MoeParamsHeader head;
  int32_t num_channels;
  int32_t max_tokens;
  int32_t chunk_tokens;
  int32_t ring_tokens;
  int32_t payload_bytes;
  int32_t scales_per_row;
  int32_t scales_offset;
  int32_t meta_offset;
  int32_t dispatch_row_bytes;
  int32_t combine_row_bytes;
  int32_t combine_warps;
  int32_t pad0;
  uint64_t dispatch_recv_ring;
  uint64_t dispatch_send_stage;
  uint64_t combine_recv_ring;
  uint64_t combine_send_stage;
  uint64_t signals;
  uint64_t token_slot;
  uint64_t channel_count;
  uint64_t tokens_per_rank;
  uint64_t tokens_per_expert;
  uint64_t layout_status;
  uint64_t state;
  uint64_t wait_ns;
  uint64_t recv_channel_offset;
  uint64_t recv_channel_count;
  uint64_t recv_total;
  uint64_t local_expert_counts;
  uint64_t recv_x;
  uint64_t recv_scales;
  uint64_t recv_topk_idx;
  uint64_t recv_topk_weights;
  uint64_t recv_src;
  uint64_t combined;
  uint64_t direct_recv;
  uint64_t combine_landing;
  uint64_t direct_recv_bytes;
  uint64_t exchange;
  uint64_t exchange_host;
  uint64_t expert_table;
  uint64_t direct_state;
  uint64_t ce_landing;
  uint64_t stage_x;
  uint64_t stage_scales;
  uint64_t stage_topk_idx;
  uint64_t stage_topk_weights;
  uint64_t stage_src;
};

namespace MoeParamsDescriptor {
constexpr uint32_t PARAMS_MAGIC = 0x31454f4du;
constexpr uint32_t HEAD_OFFSET = 0;
constexpr uint32_t NUM_CHANNELS_OFFSET = 32;
constexpr uint32_t MAX_TOKENS_OFFSET = 36;
constexpr uint32_t CHUNK_TOKENS_OFFSET = 40;
constexpr uint32_t RING_TOKENS_OFFSET = 44;
constexpr uint32_t PAYLOAD_BYTES_OFFSET = 48;
constexpr uint32_t SCALES_PER_ROW_OFFSET = 52;
constexpr uint32_t SCALES_OFFSET_OFFSET = 56;
constexpr uint32_t META_OFFSET_OFFSET = 60;
constexpr uint32_t DISPATCH_ROW_BYTES_OFFSET = 64;
constexpr uint32_t COMBINE_ROW_BYTES_OFFSET = 68;
constexpr uint32_t COMBINE_WARPS_OFFSET = 72;
constexpr uint32_t PAD0_OFFSET = 76;
constexpr uint32_t DISPATCH_RECV_RING_OFFSET = 80;
constexpr uint32_t DISPATCH_SEND_STAGE_OFFSET = 88;
constexpr uint32_t COMBINE_RECV_RING_OFFSET = 96;
constexpr uint32_t COMBINE_SEND_STAGE_OFFSET = 104;
constexpr uint32_t SIGNALS_OFFSET = 112;
constexpr uint32_t TOKEN_SLOT_OFFSET = 120;
constexpr uint32_t CHANNEL_COUNT_OFFSET = 128;
constexpr uint32_t TOKENS_PER_RANK_OFFSET = 136;
constexpr uint32_t TOKENS_PER_EXPERT_OFFSET = 144;
constexpr uint32_t LAYOUT_STATUS_OFFSET = 152;
constexpr uint32_t STATE_OFFSET = 160;
constexpr uint32_t WAIT_NS_OFFSET = 168;
constexpr uint32_t RECV_CHANNEL_OFFSET_OFFSET = 176;
constexpr uint32_t RECV_CHANNEL_COUNT_OFFSET = 184;
constexpr uint32_t RECV_TOTAL_OFFSET = 192;
constexpr uint32_t LOCAL_EXPERT_COUNTS_OFFSET = 200;
constexpr uint32_t RECV_X_OFFSET = 208;
constexpr uint32_t RECV_SCALES_OFFSET = 216;
constexpr uint32_t RECV_TOPK_IDX_OFFSET = 224;
constexpr uint32_t RECV_TOPK_WEIGHTS_OFFSET = 232;
constexpr uint32_t RECV_SRC_OFFSET = 240;
constexpr uint32_t COMBINED_OFFSET = 248;
constexpr uint32_t DIRECT_RECV_OFFSET = 256;
constexpr uint32_t COMBINE_LANDING_OFFSET = 264;
constexpr uint32_t DIRECT_RECV_BYTES_OFFSET = 272;
constexpr uint32_t EXCHANGE_OFFSET = 280;
constexpr uint32_t EXCHANGE_HOST_OFFSET = 288;
constexpr uint32_t EXPERT_TABLE_OFFSET = 296;
constexpr uint32_t DIRECT_STATE_OFFSET = 304;
constexpr uint32_t CE_LANDING_OFFSET = 312;
constexpr uint32_t STAGE_X_OFFSET = 320;
constexpr uint32_t STAGE_SCALES_OFFSET = 328;
constexpr uint32_t STAGE_TOPK_IDX_OFFSET = 336;
constexpr uint32_t STAGE_TOPK_WEIGHTS_OFFSET = 344;
constexpr uint32_t STAGE_SRC_OFFSET = 352;
constexpr uint32_t LENGTH = 360;
}  // namespace MoeParamsDescriptor

static_assert(offsetof(MoeParams, head) == MoeParamsDescriptor::HEAD_OFFSET, "head");
static_assert(offsetof(MoeParams, num_channels) == MoeParamsDescriptor::NUM_CHANNELS_OFFSET, "num_channels");
static_assert(offsetof(MoeParams, max_tokens) == MoeParamsDescriptor::MAX_TOKENS_OFFSET, "max_tokens");
static_assert(offsetof(MoeParams, chunk_tokens) == MoeParamsDescriptor::CHUNK_TOKENS_OFFSET, "chunk_tokens");
static_assert(offsetof(MoeParams, ring_tokens) == MoeParamsDescriptor::RING_TOKENS_OFFSET, "ring_tokens");
static_assert(offsetof(MoeParams, payload_bytes) == MoeParamsDescriptor::PAYLOAD_BYTES_OFFSET, "payload_bytes");
static_assert(offsetof(MoeParams, scales_per_row) == MoeParamsDescriptor::SCALES_PER_ROW_OFFSET, "scales_per_row");
static_assert(offsetof(MoeParams, scales_offset) == MoeParamsDescriptor::SCALES_OFFSET_OFFSET, "scales_offset");
static_assert(offsetof(MoeParams, meta_offset) == MoeParamsDescriptor::META_OFFSET_OFFSET, "meta_offset");
static_assert(offsetof(MoeParams, dispatch_row_bytes) == MoeParamsDescriptor::DISPATCH_ROW_BYTES_OFFSET, "dispatch_row_bytes");
static_assert(offsetof(MoeParams, combine_row_bytes) == MoeParamsDescriptor::COMBINE_ROW_BYTES_OFFSET, "combine_row_bytes");
static_assert(offsetof(MoeParams, combine_warps) == MoeParamsDescriptor::COMBINE_WARPS_OFFSET, "combine_warps");
static_assert(offsetof(MoeParams, pad0) == MoeParamsDescriptor::PAD0_OFFSET, "pad0");
static_assert(offsetof(MoeParams, dispatch_recv_ring) == MoeParamsDescriptor::DISPATCH_RECV_RING_OFFSET, "dispatch_recv_ring");
static_assert(offsetof(MoeParams, dispatch_send_stage) == MoeParamsDescriptor::DISPATCH_SEND_STAGE_OFFSET, "dispatch_send_stage");
static_assert(offsetof(MoeParams, combine_recv_ring) == MoeParamsDescriptor::COMBINE_RECV_RING_OFFSET, "combine_recv_ring");
static_assert(offsetof(MoeParams, combine_send_stage) == MoeParamsDescriptor::COMBINE_SEND_STAGE_OFFSET, "combine_send_stage");
static_assert(offsetof(MoeParams, signals) == MoeParamsDescriptor::SIGNALS_OFFSET, "signals");
static_assert(offsetof(MoeParams, token_slot) == MoeParamsDescriptor::TOKEN_SLOT_OFFSET, "token_slot");
static_assert(offsetof(MoeParams, channel_count) == MoeParamsDescriptor::CHANNEL_COUNT_OFFSET, "channel_count");
static_assert(offsetof(MoeParams, tokens_per_rank) == MoeParamsDescriptor::TOKENS_PER_RANK_OFFSET, "tokens_per_rank");
static_assert(offsetof(MoeParams, tokens_per_expert) == MoeParamsDescriptor::TOKENS_PER_EXPERT_OFFSET, "tokens_per_expert");
static_assert(offsetof(MoeParams, layout_status) == MoeParamsDescriptor::LAYOUT_STATUS_OFFSET, "layout_status");
static_assert(offsetof(MoeParams, state) == MoeParamsDescriptor::STATE_OFFSET, "state");
static_assert(offsetof(MoeParams, wait_ns) == MoeParamsDescriptor::WAIT_NS_OFFSET, "wait_ns");
static_assert(offsetof(MoeParams, recv_channel_offset) == MoeParamsDescriptor::RECV_CHANNEL_OFFSET_OFFSET, "recv_channel_offset");
static_assert(offsetof(MoeParams, recv_channel_count) == MoeParamsDescriptor::RECV_CHANNEL_COUNT_OFFSET, "recv_channel_count");
static_assert(offsetof(MoeParams, recv_total) == MoeParamsDescriptor::RECV_TOTAL_OFFSET, "recv_total");
static_assert(offsetof(MoeParams, local_expert_counts) == MoeParamsDescriptor::LOCAL_EXPERT_COUNTS_OFFSET, "local_expert_counts");
static_assert(offsetof(MoeParams, recv_x) == MoeParamsDescriptor::RECV_X_OFFSET, "recv_x");
static_assert(offsetof(MoeParams, recv_scales) == MoeParamsDescriptor::RECV_SCALES_OFFSET, "recv_scales");
static_assert(offsetof(MoeParams, recv_topk_idx) == MoeParamsDescriptor::RECV_TOPK_IDX_OFFSET, "recv_topk_idx");
static_assert(offsetof(MoeParams, recv_topk_weights) == MoeParamsDescriptor::RECV_TOPK_WEIGHTS_OFFSET, "recv_topk_weights");
static_assert(offsetof(MoeParams, recv_src) == MoeParamsDescriptor::RECV_SRC_OFFSET, "recv_src");
static_assert(offsetof(MoeParams, combined) == MoeParamsDescriptor::COMBINED_OFFSET, "combined");
static_assert(offsetof(MoeParams, direct_recv) == MoeParamsDescriptor::DIRECT_RECV_OFFSET, "direct_recv");
static_assert(offsetof(MoeParams, combine_landing) == MoeParamsDescriptor::COMBINE_LANDING_OFFSET, "combine_landing");
static_assert(offsetof(MoeParams, direct_recv_bytes) == MoeParamsDescriptor::DIRECT_RECV_BYTES_OFFSET, "direct_recv_bytes");
static_assert(offsetof(MoeParams, exchange) == MoeParamsDescriptor::EXCHANGE_OFFSET, "exchange");
static_assert(offsetof(MoeParams, exchange_host) == MoeParamsDescriptor::EXCHANGE_HOST_OFFSET, "exchange_host");
static_assert(offsetof(MoeParams, expert_table) == MoeParamsDescriptor::EXPERT_TABLE_OFFSET, "expert_table");
static_assert(offsetof(MoeParams, direct_state) == MoeParamsDescriptor::DIRECT_STATE_OFFSET, "direct_state");
static_assert(offsetof(MoeParams, ce_landing) == MoeParamsDescriptor::CE_LANDING_OFFSET, "ce_landing");
static_assert(offsetof(MoeParams, stage_x) == MoeParamsDescriptor::STAGE_X_OFFSET, "stage_x");
static_assert(offsetof(MoeParams, stage_scales) == MoeParamsDescriptor::STAGE_SCALES_OFFSET, "stage_scales");
static_assert(offsetof(MoeParams, stage_topk_idx) == MoeParamsDescriptor::STAGE_TOPK_IDX_OFFSET, "stage_topk_idx");
static_assert(offsetof(MoeParams, stage_topk_weights) == MoeParamsDescriptor::STAGE_TOPK_WEIGHTS_OFFSET, "stage_topk_weights");
static_assert(offsetof(MoeParams, stage_src) == MoeParamsDescriptor::STAGE_SRC_OFFSET, "stage_src");
static_assert(sizeof(MoeParams) == MoeParamsDescriptor::LENGTH, "MoeParams length");

// Signal words of the heap's signal section (io.gda4j.moe.ht.HighThroughputSizing: the same formulas).
struct SignalIndex {
  int32_t channels, nranks;
  GDA4J_MOE_FN int32_t dispatch_count(int parity, int c, int src) const { return (parity * channels + c) * nranks + src; }
  GDA4J_MOE_FN int32_t dispatch_tail(int c, int src) const { return (2 * channels + c) * nranks + src; }
  GDA4J_MOE_FN int32_t dispatch_credit(int c, int dst) const { return (3 * channels + c) * nranks + dst; }
  GDA4J_MOE_FN int32_t combine_tail(int c, int src) const { return (4 * channels + c) * nranks + src; }
  GDA4J_MOE_FN int32_t combine_credit(int c, int dst) const { return (5 * channels + c) * nranks + dst; }
  // Direct worlds (every pair p2p or self), after the channel words:
  //   direct_count[2 parity][N src][N dst]  SET by src at every rank in its layout exchange number x (parity x & 1):
  //                                         x << 32 | rows src sends dst
  //   dispatch_done[N src]                  SET by src to its dispatch sequence once all its rows here have landed
  //   combine_entry[N src]                  SET by src to seq << 1 | pull when its combine starts
  //   combine_done[N src]                   SET by src to its combine sequence once its rows here landed (push) or
  //                                         its reads are done (pull)
  //   dispatch_entry[N src]                 SET by src to its dispatch sequence when it starts a dispatch into the
  //                                         region its previous dispatch wrote (a captured call replayed)
  GDA4J_MOE_FN int32_t direct_count(int parity, int src, int dst) const {
    return 6 * channels * nranks + (parity * nranks + src) * nranks + dst;
  }
  GDA4J_MOE_FN int32_t dispatch_done(int src) const { return 6 * channels * nranks + 2 * nranks * nranks + src; }
  GDA4J_MOE_FN int32_t combine_entry(int src) const { return dispatch_done(0) + nranks + src; }
  GDA4J_MOE_FN int32_t combine_done(int src) const { return dispatch_done(0) + 2 * nranks + src; }
  GDA4J_MOE_FN int32_t dispatch_entry(int src) const { return dispatch_done(0) + 3 * nranks + src; }
  GDA4J_MOE_FN int32_t words() const { return dispatch_done(0) + 4 * nranks; }
};

// The layout exchange's results in a direct world (io.gda4j.moe.ht.HighThroughputSizing: the same formulas), i32 words of one
// block (params.exchange, one block per exchange parity), mirrored after a u64 stamp in the host block:
//   first_row[C][N dest]  where this rank's rows of channel c begin at dest (the combines find them there too)
//   dest_base[N]          where this rank's rows begin at dest (after every lower source's)
//   dest_rows[N]          rows this rank sends dest
//   src_base[N]           where source s's rows begin here
//   src_rows[N]           rows source s sends here
//   recv_total            rows this rank receives
//   expert_count[L]       (row, top-k slot) pairs per local expert, over every source
struct ExchangeIndex {
  int32_t channels, nranks, local;
  GDA4J_MOE_FN int32_t first_row(int c, int dest) const { return c * nranks + dest; }
  GDA4J_MOE_FN int32_t dest_base(int dest) const { return channels * nranks + dest; }
  GDA4J_MOE_FN int32_t dest_rows(int dest) const { return channels * nranks + nranks + dest; }
  GDA4J_MOE_FN int32_t src_base(int src) const { return channels * nranks + 2 * nranks + src; }
  GDA4J_MOE_FN int32_t src_rows(int src) const { return channels * nranks + 3 * nranks + src; }
  GDA4J_MOE_FN int32_t recv_total() const { return channels * nranks + 4 * nranks; }
  GDA4J_MOE_FN int32_t expert_count(int e) const { return recv_total() + 1 + e; }
  GDA4J_MOE_FN int32_t words() const { return recv_total() + 1 + local; }
  // One device block, and one host block (the stamp, then the words), each a multiple of 256 bytes.
  GDA4J_MOE_FN uint64_t block_bytes() const { return (4ull * words() + 255) / 256 * 256; }
  GDA4J_MOE_FN uint64_t host_block_bytes() const { return (8ull + 4ull * words() + 255) / 256 * 256; }
};

// Direct worlds' state words in device memory (params.direct_state, u64 each).
constexpr int32_t DSTATE_FLAGS = 0;              // DSTATE_DISPATCHED | region << 1 | DSTATE_COMBINED
constexpr int32_t DSTATE_DISPATCH_BLOCKS = 1;    // blocks of this call done (the last one signals the peers)
constexpr int32_t DSTATE_COMBINE_BLOCKS = 2;
constexpr int32_t DSTATE_DISPATCH_SEQ = 3;       // the copy-engine dispatch's sequence, copied to the peers' done words
constexpr int32_t DSTATE_COMBINE_SEQ = 4;        // the copy-engine combine's
constexpr int32_t DSTATE_WORDS = 8;
constexpr uint64_t DSTATE_DISPATCHED = 1;        // a dispatch ran; bit 1 is the region it wrote
constexpr uint64_t DSTATE_COMBINED = 4;          // a combine ran since

// Channel state words in device memory (u64, cumulative over calls): which * (C * N) + c * N + peer.
constexpr int32_t STATE_DISPATCH_SENT = 0;
constexpr int32_t STATE_DISPATCH_CONSUMED = 1;
constexpr int32_t STATE_COMBINE_SENT = 2;
constexpr int32_t STATE_COMBINE_CONSUMED = 3;

// Layout status: 0, or the first bad entry: token * top_k + slot + 1 in the low word, the value in the high word.

}  // namespace moe
}  // namespace gda4j

// gda4j/moe/ll_params.cuh: the low-latency MoE parameter block, mirrored by io.gda4j.moe.ll.MoeLowLatencyParamsDescriptor
// (same names, same offsets; MoeLowLatencyParamsLayoutTest compiles this header with g++ and compares). Built once
// per rank by LowLatencyBuffer and passed to every kernel by value (const __grid_constant__ LlParams: kernel
// parameter memory, no memory round trip per field); io.gda4j.moe.ll.LowLatencySizing describes the memory the
// offsets point at. Plain C++, so g++ can print it.
//
//        0  hdr  head  (MoeParamsHeader, params_header.cuh: magic, nranks, rank, hidden, dtype, top_k,
//                       num_experts, num_local_experts)
//       32  i32  max_tokens
//       36  i32  slots_per_expert
//       40  i32  payload_bytes
//       44  i32  scales_per_row
//       48  i32  power_of_two_scales
//       52  i32  msg_bytes  (bytes of a staged row message; 0: no staging)
//       56  u64  region  (heap offset of buffer 0)
//       64  u64  buffer_bytes  (heap bytes of a buffer)
//       72  u64  recv_x  (offset in a buffer)
//       80  u64  recv_scales  (offset in a buffer)
//       88  u64  recv_src  (offset in a buffer)
//       96  u64  combine_recv  (offset in a buffer)
//      104  u64  recv_msg  (offset in a buffer)
//      112  u64  send_msg  (offset in a buffer)
//      120  u64  combine_input  (offset in a buffer)
//      128  u64  signals  (heap offset)
//      136  u64  status  (device address)
//      144  u64  seq  (device address)
//      152  u64  wait_ns  (device address)
//      160  u64  buffer_state  (device address of buffer 0's state)
//      168  u64  state_bytes  (bytes of a buffer's state)
//      176  u64  route_slot  (offset in a state)
//      184  u64  send_count  (offset in a state)
//      192  u64  send_base  (offset in a state)
//      200  u64  send_done  (offset in a state)
//      208  u64  recv_count_src  (offset in a state)
//      216  u64  recv_count  (offset in a state)
//      224  u64  combined  (offset in a state)
//      232  u64  combine_ready  (offset in a state)
//      240  u64  tables  (offset in a buffer: the count tables batched pairs fill, [N][L] u64)
//      248  u64  combine_stage  (offset in a buffer)
//      256  u64  recv_offset_src  (offset in a state)
//      264  u64  combine_done  (offset in a state)
//      272  u64  token_stage  (offset in a buffer)
//      280  i32  stage_row_bytes  (bytes of a token stage row; 0: p2p rows are not gathered)
//      284  i32  tagged  (1: the tagged protocol, ll_tagged.cuh; 0: the counted one)
//      288  u64  tag_counts  (offset in a buffer)
//      296  u64  tag_rows  (offset in a buffer)
//      304  i32  tag_count_words  (tagged words of a count vector)
//      308  i32  tag_header_words  (tagged words of a row's header)
//      312  i32  tag_scale_word  (a tagged row's first scale word)
//      316  i32  tag_row_words  (tagged words of a row)
//      320  (length)
#pragma once
#include <stdint.h>
#include <stddef.h>
#include "params_header.cuh"

#if defined(__CUDACC__)
#define GDA4J_LL_FN __host__ __device__ __forceinline__
#else
#define GDA4J_LL_FN inline
#endif

namespace gda4j {
namespace moe {

struct LlParams {
  MoeParamsHeader head;
  int32_t max_tokens;
  int32_t slots_per_expert;
  int32_t payload_bytes;
  int32_t scales_per_row;
  int32_t power_of_two_scales;
  int32_t msg_bytes;
  uint64_t region;
  uint64_t buffer_bytes;
  uint64_t recv_x;
  uint64_t recv_scales;
  uint64_t recv_src;
  uint64_t combine_recv;
  uint64_t recv_msg;
  uint64_t send_msg;
  uint64_t combine_input;
  uint64_t signals;
  uint64_t status;
  uint64_t seq;
  uint64_t wait_ns;
  uint64_t buffer_state;
  uint64_t state_bytes;
  uint64_t route_slot;
  uint64_t send_count;
  uint64_t send_base;
  uint64_t send_done;
  uint64_t recv_count_src;
  uint64_t recv_count;
  uint64_t combined;
  uint64_t combine_ready;
  uint64_t tables;
  uint64_t combine_stage;
  uint64_t recv_offset_src;
  uint64_t combine_done;
  uint64_t token_stage;
  int32_t stage_row_bytes;
  int32_t tagged;
  uint64_t tag_counts;
  uint64_t tag_rows;
  int32_t tag_count_words;
  int32_t tag_header_words;
  int32_t tag_scale_word;
  int32_t tag_row_words;
};

namespace MoeLowLatencyParamsDescriptor {
constexpr uint32_t PARAMS_MAGIC = 0x314c4f4du;
constexpr uint32_t HEAD_OFFSET = 0;
constexpr uint32_t MAX_TOKENS_OFFSET = 32;
constexpr uint32_t SLOTS_PER_EXPERT_OFFSET = 36;
constexpr uint32_t PAYLOAD_BYTES_OFFSET = 40;
constexpr uint32_t SCALES_PER_ROW_OFFSET = 44;
constexpr uint32_t POWER_OF_TWO_SCALES_OFFSET = 48;
constexpr uint32_t MSG_BYTES_OFFSET = 52;
constexpr uint32_t REGION_OFFSET = 56;
constexpr uint32_t BUFFER_BYTES_OFFSET = 64;
constexpr uint32_t RECV_X_OFFSET = 72;
constexpr uint32_t RECV_SCALES_OFFSET = 80;
constexpr uint32_t RECV_SRC_OFFSET = 88;
constexpr uint32_t COMBINE_RECV_OFFSET = 96;
constexpr uint32_t RECV_MSG_OFFSET = 104;
constexpr uint32_t SEND_MSG_OFFSET = 112;
constexpr uint32_t COMBINE_INPUT_OFFSET = 120;
constexpr uint32_t SIGNALS_OFFSET = 128;
constexpr uint32_t STATUS_OFFSET = 136;
constexpr uint32_t SEQ_OFFSET = 144;
constexpr uint32_t WAIT_NS_OFFSET = 152;
constexpr uint32_t BUFFER_STATE_OFFSET = 160;
constexpr uint32_t STATE_BYTES_OFFSET = 168;
constexpr uint32_t ROUTE_SLOT_OFFSET = 176;
constexpr uint32_t SEND_COUNT_OFFSET = 184;
constexpr uint32_t SEND_BASE_OFFSET = 192;
constexpr uint32_t SEND_DONE_OFFSET = 200;
constexpr uint32_t RECV_COUNT_SRC_OFFSET = 208;
constexpr uint32_t RECV_COUNT_OFFSET = 216;
constexpr uint32_t COMBINED_OFFSET = 224;
constexpr uint32_t COMBINE_READY_OFFSET = 232;
constexpr uint32_t TABLES_OFFSET = 240;
constexpr uint32_t COMBINE_STAGE_OFFSET = 248;
constexpr uint32_t RECV_OFFSET_SRC_OFFSET = 256;
constexpr uint32_t COMBINE_DONE_OFFSET = 264;
constexpr uint32_t TOKEN_STAGE_OFFSET = 272;
constexpr uint32_t STAGE_ROW_BYTES_OFFSET = 280;
constexpr uint32_t TAGGED_OFFSET = 284;
constexpr uint32_t TAG_COUNTS_OFFSET = 288;
constexpr uint32_t TAG_ROWS_OFFSET = 296;
constexpr uint32_t TAG_COUNT_WORDS_OFFSET = 304;
constexpr uint32_t TAG_HEADER_WORDS_OFFSET = 308;
constexpr uint32_t TAG_SCALE_WORD_OFFSET = 312;
constexpr uint32_t TAG_ROW_WORDS_OFFSET = 316;
constexpr uint32_t LENGTH = 320;
// Warps per block of the token-parallel kernels: dispatch send (they share a token's row), combine receive. The host
// sizes their grids with it.
constexpr uint32_t TOKEN_WARPS = 8;
// Channels a warp of the dispatch send moves per step (16 per lane). The host gives a token as many blocks (parts)
// as it takes for each warp to hold at most one such chunk of the row.
constexpr uint32_t SEND_CHUNK = 512;
// Tagged pairs a lane of the tagged dispatch's receive loads at once: one warp's segment of a row (4 FP8 chunks, 2
// BF16). The host sizes the receive's grid with the segments a row has.
constexpr uint32_t TAG_SEGMENT_PAIRS = 8;
}  // namespace MoeLowLatencyParamsDescriptor

static_assert(offsetof(LlParams, head) == MoeLowLatencyParamsDescriptor::HEAD_OFFSET, "head");
static_assert(offsetof(LlParams, max_tokens) == MoeLowLatencyParamsDescriptor::MAX_TOKENS_OFFSET, "max_tokens");
static_assert(offsetof(LlParams, slots_per_expert) == MoeLowLatencyParamsDescriptor::SLOTS_PER_EXPERT_OFFSET, "slots_per_expert");
static_assert(offsetof(LlParams, payload_bytes) == MoeLowLatencyParamsDescriptor::PAYLOAD_BYTES_OFFSET, "payload_bytes");
static_assert(offsetof(LlParams, scales_per_row) == MoeLowLatencyParamsDescriptor::SCALES_PER_ROW_OFFSET, "scales_per_row");
static_assert(offsetof(LlParams, power_of_two_scales) == MoeLowLatencyParamsDescriptor::POWER_OF_TWO_SCALES_OFFSET, "power_of_two_scales");
static_assert(offsetof(LlParams, msg_bytes) == MoeLowLatencyParamsDescriptor::MSG_BYTES_OFFSET, "msg_bytes");
static_assert(offsetof(LlParams, region) == MoeLowLatencyParamsDescriptor::REGION_OFFSET, "region");
static_assert(offsetof(LlParams, buffer_bytes) == MoeLowLatencyParamsDescriptor::BUFFER_BYTES_OFFSET, "buffer_bytes");
static_assert(offsetof(LlParams, recv_x) == MoeLowLatencyParamsDescriptor::RECV_X_OFFSET, "recv_x");
static_assert(offsetof(LlParams, recv_scales) == MoeLowLatencyParamsDescriptor::RECV_SCALES_OFFSET, "recv_scales");
static_assert(offsetof(LlParams, recv_src) == MoeLowLatencyParamsDescriptor::RECV_SRC_OFFSET, "recv_src");
static_assert(offsetof(LlParams, combine_recv) == MoeLowLatencyParamsDescriptor::COMBINE_RECV_OFFSET, "combine_recv");
static_assert(offsetof(LlParams, recv_msg) == MoeLowLatencyParamsDescriptor::RECV_MSG_OFFSET, "recv_msg");
static_assert(offsetof(LlParams, send_msg) == MoeLowLatencyParamsDescriptor::SEND_MSG_OFFSET, "send_msg");
static_assert(offsetof(LlParams, combine_input) == MoeLowLatencyParamsDescriptor::COMBINE_INPUT_OFFSET, "combine_input");
static_assert(offsetof(LlParams, signals) == MoeLowLatencyParamsDescriptor::SIGNALS_OFFSET, "signals");
static_assert(offsetof(LlParams, status) == MoeLowLatencyParamsDescriptor::STATUS_OFFSET, "status");
static_assert(offsetof(LlParams, seq) == MoeLowLatencyParamsDescriptor::SEQ_OFFSET, "seq");
static_assert(offsetof(LlParams, wait_ns) == MoeLowLatencyParamsDescriptor::WAIT_NS_OFFSET, "wait_ns");
static_assert(offsetof(LlParams, buffer_state) == MoeLowLatencyParamsDescriptor::BUFFER_STATE_OFFSET, "buffer_state");
static_assert(offsetof(LlParams, state_bytes) == MoeLowLatencyParamsDescriptor::STATE_BYTES_OFFSET, "state_bytes");
static_assert(offsetof(LlParams, route_slot) == MoeLowLatencyParamsDescriptor::ROUTE_SLOT_OFFSET, "route_slot");
static_assert(offsetof(LlParams, send_count) == MoeLowLatencyParamsDescriptor::SEND_COUNT_OFFSET, "send_count");
static_assert(offsetof(LlParams, send_base) == MoeLowLatencyParamsDescriptor::SEND_BASE_OFFSET, "send_base");
static_assert(offsetof(LlParams, send_done) == MoeLowLatencyParamsDescriptor::SEND_DONE_OFFSET, "send_done");
static_assert(offsetof(LlParams, recv_count_src) == MoeLowLatencyParamsDescriptor::RECV_COUNT_SRC_OFFSET, "recv_count_src");
static_assert(offsetof(LlParams, recv_count) == MoeLowLatencyParamsDescriptor::RECV_COUNT_OFFSET, "recv_count");
static_assert(offsetof(LlParams, combined) == MoeLowLatencyParamsDescriptor::COMBINED_OFFSET, "combined");
static_assert(offsetof(LlParams, combine_ready) == MoeLowLatencyParamsDescriptor::COMBINE_READY_OFFSET, "combine_ready");
static_assert(offsetof(LlParams, tables) == MoeLowLatencyParamsDescriptor::TABLES_OFFSET, "tables");
static_assert(offsetof(LlParams, combine_stage) == MoeLowLatencyParamsDescriptor::COMBINE_STAGE_OFFSET, "combine_stage");
static_assert(offsetof(LlParams, recv_offset_src) == MoeLowLatencyParamsDescriptor::RECV_OFFSET_SRC_OFFSET, "recv_offset_src");
static_assert(offsetof(LlParams, combine_done) == MoeLowLatencyParamsDescriptor::COMBINE_DONE_OFFSET, "combine_done");
static_assert(offsetof(LlParams, token_stage) == MoeLowLatencyParamsDescriptor::TOKEN_STAGE_OFFSET, "token_stage");
static_assert(offsetof(LlParams, stage_row_bytes) == MoeLowLatencyParamsDescriptor::STAGE_ROW_BYTES_OFFSET,
              "stage_row_bytes");
static_assert(offsetof(LlParams, tagged) == MoeLowLatencyParamsDescriptor::TAGGED_OFFSET, "tagged");
static_assert(offsetof(LlParams, tag_counts) == MoeLowLatencyParamsDescriptor::TAG_COUNTS_OFFSET, "tag_counts");
static_assert(offsetof(LlParams, tag_rows) == MoeLowLatencyParamsDescriptor::TAG_ROWS_OFFSET, "tag_rows");
static_assert(offsetof(LlParams, tag_count_words) == MoeLowLatencyParamsDescriptor::TAG_COUNT_WORDS_OFFSET,
              "tag_count_words");
static_assert(offsetof(LlParams, tag_header_words) == MoeLowLatencyParamsDescriptor::TAG_HEADER_WORDS_OFFSET,
              "tag_header_words");
static_assert(offsetof(LlParams, tag_scale_word) == MoeLowLatencyParamsDescriptor::TAG_SCALE_WORD_OFFSET,
              "tag_scale_word");
static_assert(offsetof(LlParams, tag_row_words) == MoeLowLatencyParamsDescriptor::TAG_ROW_WORDS_OFFSET,
              "tag_row_words");
static_assert(sizeof(LlParams) == MoeLowLatencyParamsDescriptor::LENGTH, "LlParams length");

// A dispatch count's low word is the rows, with this bit set where the source gathered them into the receiver's token
// stage (io.gda4j.moe.ll.LowLatencySizing.GATHERED_ROWS): the receive half then copies them out.
constexpr uint32_t LL_GATHERED_ROWS = 1u << 31;

// Ints of a row's source record (io.gda4j.moe.ll.LowLatencySizing.SRC_INTS): source rank, source token, top-k slot,
// send row (the row's place in the source's send order, which is also where the combine returns it).
constexpr int32_t LL_SRC_INTS = 4;

// A staged row's message (rows to proxy and ibgda peers, io.gda4j.moe.ll.LowLatencySizing.msgBytes): a put of one
// message carries everything the receiver's row needs.
//   0                   i32 x LL_SRC_INTS      the source record
//   16                  payload_bytes          the row (BF16, or FP8 codes)
//   16 + payload_bytes  f32 x scales_per_row   FP8 only
//   msg_bytes = the above rounded up to 16
constexpr int32_t LL_MSG_HEADER_BYTES = 16;

// Message slots a batched pair's count table (num_local_experts u64) takes where it travels with the rows, in one
// put: at the head of each source's part of recv_msg, and in the gap before each rank's rows in send_msg
// (io.gda4j.moe.ll.LowLatencySizing.tableMsgs). 0 where nothing is staged.
GDA4J_LL_FN uint64_t ll_table_msgs(int32_t num_local_experts, uint64_t msg_bytes) {
  return msg_bytes == 0 ? 0 : (8ull * (uint64_t)num_local_experts + msg_bytes - 1) / msg_bytes;
}

// Signal words of the low-latency heap signal section (io.gda4j.moe.ll.LowLatencySizing: the same formulas).
struct LlSignalIndex {
  int32_t num_local_experts, nranks, num_experts;
  GDA4J_LL_FN int32_t dispatch_count(int buffer, int local_expert, int src) const {
    return (buffer * num_local_experts + local_expert) * nranks + src;
  }
  GDA4J_LL_FN int32_t combine_flag(int buffer, int expert) const {
    return 2 * num_local_experts * nranks + buffer * num_experts + expert;
  }
  // Where a pair's puts are batched (ll.cuh: one put of all a source's rows to a rank): the word its one signal SETs.
  GDA4J_LL_FN int32_t dispatch_batch(int buffer, int src) const {
    return 2 * num_local_experts * nranks + 2 * num_experts + buffer * nranks + src;
  }
  GDA4J_LL_FN int32_t combine_batch(int buffer, int expert_rank) const {
    return 2 * num_local_experts * nranks + 2 * num_experts + 2 * nranks + buffer * nranks + expert_rank;
  }
  // The tagged protocol (ll_tagged.cuh): the one flag per expert rank that its combine SETs at every rank, in place
  // of its experts' flags (pulling: at its start; pushing: after all its rows).
  GDA4J_LL_FN int32_t combine_rank_flag(int buffer, int expert_rank) const {
    return 2 * num_local_experts * nranks + 2 * num_experts + 4 * nranks + buffer * nranks + expert_rank;
  }
};

}  // namespace moe
}  // namespace gda4j

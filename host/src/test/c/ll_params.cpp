// Prints gda4j/moe/ll_params.cuh's LlParams layout and signal-word formulas as "name value" lines;
// MoeLowLatencyParamsLayoutTest compares them with io.gda4j.moe.ll.MoeLowLatencyParamsDescriptor and LowLatencySizing.
#include <cstddef>
#include <cstdio>
#include "gda4j/moe/ll_params.cuh"

using namespace gda4j::moe;
#define P(name, value) std::printf("%s %lld\n", name, (long long)(value))
#include "params_head.h"

int main() {
  P("HEAD_OFFSET", offsetof(LlParams, head));
  GDA4J_PRINT_PARAMS_HEAD(LlParams);
  P("MAX_TOKENS_OFFSET", offsetof(LlParams, max_tokens));
  P("SLOTS_PER_EXPERT_OFFSET", offsetof(LlParams, slots_per_expert));
  P("PAYLOAD_BYTES_OFFSET", offsetof(LlParams, payload_bytes));
  P("SCALES_PER_ROW_OFFSET", offsetof(LlParams, scales_per_row));
  P("POWER_OF_TWO_SCALES_OFFSET", offsetof(LlParams, power_of_two_scales));
  P("MSG_BYTES_OFFSET", offsetof(LlParams, msg_bytes));
  P("REGION_OFFSET", offsetof(LlParams, region));
  P("BUFFER_BYTES_OFFSET", offsetof(LlParams, buffer_bytes));
  P("RECV_X_OFFSET", offsetof(LlParams, recv_x));
  P("RECV_SCALES_OFFSET", offsetof(LlParams, recv_scales));
  P("RECV_SRC_OFFSET", offsetof(LlParams, recv_src));
  P("COMBINE_RECV_OFFSET", offsetof(LlParams, combine_recv));
  P("RECV_MSG_OFFSET", offsetof(LlParams, recv_msg));
  P("SEND_MSG_OFFSET", offsetof(LlParams, send_msg));
  P("COMBINE_INPUT_OFFSET", offsetof(LlParams, combine_input));
  P("SIGNALS_OFFSET", offsetof(LlParams, signals));
  P("STATUS_OFFSET", offsetof(LlParams, status));
  P("SEQ_OFFSET", offsetof(LlParams, seq));
  P("WAIT_NS_OFFSET", offsetof(LlParams, wait_ns));
  P("BUFFER_STATE_OFFSET", offsetof(LlParams, buffer_state));
  P("STATE_BYTES_OFFSET", offsetof(LlParams, state_bytes));
  P("ROUTE_SLOT_OFFSET", offsetof(LlParams, route_slot));
  P("SEND_COUNT_OFFSET", offsetof(LlParams, send_count));
  P("SEND_BASE_OFFSET", offsetof(LlParams, send_base));
  P("SEND_DONE_OFFSET", offsetof(LlParams, send_done));
  P("RECV_COUNT_SRC_OFFSET", offsetof(LlParams, recv_count_src));
  P("RECV_COUNT_OFFSET", offsetof(LlParams, recv_count));
  P("COMBINED_OFFSET", offsetof(LlParams, combined));
  P("COMBINE_READY_OFFSET", offsetof(LlParams, combine_ready));
  P("TABLES_OFFSET", offsetof(LlParams, tables));
  P("COMBINE_STAGE_OFFSET", offsetof(LlParams, combine_stage));
  P("RECV_OFFSET_SRC_OFFSET", offsetof(LlParams, recv_offset_src));
  P("COMBINE_DONE_OFFSET", offsetof(LlParams, combine_done));
  P("LL_GATHERED_ROWS", LL_GATHERED_ROWS);
  P("TOKEN_STAGE_OFFSET", offsetof(LlParams, token_stage));
  P("STAGE_ROW_BYTES_OFFSET", offsetof(LlParams, stage_row_bytes));
  P("TAGGED_OFFSET", offsetof(LlParams, tagged));
  P("TAG_COUNTS_OFFSET", offsetof(LlParams, tag_counts));
  P("TAG_ROWS_OFFSET", offsetof(LlParams, tag_rows));
  P("TAG_COUNT_WORDS_OFFSET", offsetof(LlParams, tag_count_words));
  P("TAG_HEADER_WORDS_OFFSET", offsetof(LlParams, tag_header_words));
  P("TAG_SCALE_WORD_OFFSET", offsetof(LlParams, tag_scale_word));
  P("TAG_ROW_WORDS_OFFSET", offsetof(LlParams, tag_row_words));
  P("LENGTH", sizeof(LlParams));
  P("PARAMS_MAGIC", MoeLowLatencyParamsDescriptor::PARAMS_MAGIC);
  P("TOKEN_WARPS", MoeLowLatencyParamsDescriptor::TOKEN_WARPS);
  P("SEND_CHUNK", MoeLowLatencyParamsDescriptor::SEND_CHUNK);
  P("TAG_SEGMENT_PAIRS", MoeLowLatencyParamsDescriptor::TAG_SEGMENT_PAIRS);
  P("LL_SRC_INTS", LL_SRC_INTS);
  P("LL_MSG_HEADER_BYTES", LL_MSG_HEADER_BYTES);
  // 4 ranks, 3 local experts each (12 experts)
  const LlSignalIndex si{3, 4, 12};
  P("DISPATCH_COUNT_1_2_3", si.dispatch_count(1, 2, 3));
  P("COMBINE_FLAG_1_7", si.combine_flag(1, 7));
  P("DISPATCH_BATCH_1_2", si.dispatch_batch(1, 2));
  P("COMBINE_BATCH_1_3", si.combine_batch(1, 3));
  P("COMBINE_RANK_FLAG_1_3", si.combine_rank_flag(1, 3));
  // A batched pair's count table in message slots: exactly one, one more by a u64, several, and nothing staged.
  P("TABLE_MSGS_36_288", ll_table_msgs(36, 288));
  P("TABLE_MSGS_37_288", ll_table_msgs(37, 288));
  P("TABLE_MSGS_128_288", ll_table_msgs(128, 288));
  P("TABLE_MSGS_5_0", ll_table_msgs(5, 0));
  return 0;
}

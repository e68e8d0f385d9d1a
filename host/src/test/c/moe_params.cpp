// Prints gda4j/moe/params.cuh's MoeParams layout as "name value" lines; MoeParamsLayoutTest compares them with
// io.gda4j.moe.ht.MoeParamsDescriptor.
#include <cstddef>
#include <cstdio>
#include "gda4j/moe/params.cuh"

using namespace gda4j::moe;
#define P(name, value) std::printf("%s %lld\n", name, (long long)(value))
#include "params_head.h"

int main() {
  P("HEAD_OFFSET", offsetof(MoeParams, head));
  GDA4J_PRINT_PARAMS_HEAD(MoeParams);
  P("NUM_CHANNELS_OFFSET", offsetof(MoeParams, num_channels));
  P("MAX_TOKENS_OFFSET", offsetof(MoeParams, max_tokens));
  P("CHUNK_TOKENS_OFFSET", offsetof(MoeParams, chunk_tokens));
  P("RING_TOKENS_OFFSET", offsetof(MoeParams, ring_tokens));
  P("PAYLOAD_BYTES_OFFSET", offsetof(MoeParams, payload_bytes));
  P("SCALES_PER_ROW_OFFSET", offsetof(MoeParams, scales_per_row));
  P("SCALES_OFFSET_OFFSET", offsetof(MoeParams, scales_offset));
  P("META_OFFSET_OFFSET", offsetof(MoeParams, meta_offset));
  P("DISPATCH_ROW_BYTES_OFFSET", offsetof(MoeParams, dispatch_row_bytes));
  P("COMBINE_ROW_BYTES_OFFSET", offsetof(MoeParams, combine_row_bytes));
  P("COMBINE_WARPS_OFFSET", offsetof(MoeParams, combine_warps));
  P("PAD0_OFFSET", offsetof(MoeParams, pad0));
  P("DISPATCH_RECV_RING_OFFSET", offsetof(MoeParams, dispatch_recv_ring));
  P("DISPATCH_SEND_STAGE_OFFSET", offsetof(MoeParams, dispatch_send_stage));
  P("COMBINE_RECV_RING_OFFSET", offsetof(MoeParams, combine_recv_ring));
  P("COMBINE_SEND_STAGE_OFFSET", offsetof(MoeParams, combine_send_stage));
  P("SIGNALS_OFFSET", offsetof(MoeParams, signals));
  P("TOKEN_SLOT_OFFSET", offsetof(MoeParams, token_slot));
  P("CHANNEL_COUNT_OFFSET", offsetof(MoeParams, channel_count));
  P("TOKENS_PER_RANK_OFFSET", offsetof(MoeParams, tokens_per_rank));
  P("TOKENS_PER_EXPERT_OFFSET", offsetof(MoeParams, tokens_per_expert));
  P("LAYOUT_STATUS_OFFSET", offsetof(MoeParams, layout_status));
  P("STATE_OFFSET", offsetof(MoeParams, state));
  P("WAIT_NS_OFFSET", offsetof(MoeParams, wait_ns));
  P("RECV_CHANNEL_OFFSET_OFFSET", offsetof(MoeParams, recv_channel_offset));
  P("RECV_CHANNEL_COUNT_OFFSET", offsetof(MoeParams, recv_channel_count));
  P("RECV_TOTAL_OFFSET", offsetof(MoeParams, recv_total));
  P("LOCAL_EXPERT_COUNTS_OFFSET", offsetof(MoeParams, local_expert_counts));
  P("RECV_X_OFFSET", offsetof(MoeParams, recv_x));
  P("RECV_SCALES_OFFSET", offsetof(MoeParams, recv_scales));
  P("RECV_TOPK_IDX_OFFSET", offsetof(MoeParams, recv_topk_idx));
  P("RECV_TOPK_WEIGHTS_OFFSET", offsetof(MoeParams, recv_topk_weights));
  P("RECV_SRC_OFFSET", offsetof(MoeParams, recv_src));
  P("COMBINED_OFFSET", offsetof(MoeParams, combined));
  P("DIRECT_RECV_OFFSET", offsetof(MoeParams, direct_recv));
  P("COMBINE_LANDING_OFFSET", offsetof(MoeParams, combine_landing));
  P("DIRECT_RECV_BYTES_OFFSET", offsetof(MoeParams, direct_recv_bytes));
  P("EXCHANGE_OFFSET", offsetof(MoeParams, exchange));
  P("EXCHANGE_HOST_OFFSET", offsetof(MoeParams, exchange_host));
  P("EXPERT_TABLE_OFFSET", offsetof(MoeParams, expert_table));
  P("DIRECT_STATE_OFFSET", offsetof(MoeParams, direct_state));
  P("CE_LANDING_OFFSET", offsetof(MoeParams, ce_landing));
  P("STAGE_X_OFFSET", offsetof(MoeParams, stage_x));
  P("STAGE_SCALES_OFFSET", offsetof(MoeParams, stage_scales));
  P("STAGE_TOPK_IDX_OFFSET", offsetof(MoeParams, stage_topk_idx));
  P("STAGE_TOPK_WEIGHTS_OFFSET", offsetof(MoeParams, stage_topk_weights));
  P("STAGE_SRC_OFFSET", offsetof(MoeParams, stage_src));
  P("LENGTH", sizeof(MoeParams));
  P("PARAMS_MAGIC", MoeParamsDescriptor::PARAMS_MAGIC);
  P("DTYPE_BF16", DTYPE_BF16);
  P("DTYPE_FP8_E4M3", DTYPE_FP8_E4M3);
  SignalIndex s{3, 4};
  P("DISPATCH_COUNT_1_2_3", s.dispatch_count(1, 2, 3));
  P("DISPATCH_TAIL_2_1", s.dispatch_tail(2, 1));
  P("DISPATCH_CREDIT_1_3", s.dispatch_credit(1, 3));
  P("COMBINE_TAIL_0_2", s.combine_tail(0, 2));
  P("COMBINE_CREDIT_2_3", s.combine_credit(2, 3));
  P("DIRECT_COUNT_1_2_3", s.direct_count(1, 2, 3));
  P("DISPATCH_DONE_2", s.dispatch_done(2));
  P("COMBINE_ENTRY_1", s.combine_entry(1));
  P("COMBINE_DONE_3", s.combine_done(3));
  P("DISPATCH_ENTRY_2", s.dispatch_entry(2));
  P("SIGNAL_WORDS", s.words());
  ExchangeIndex x{3, 4, 5};
  P("X_FIRST_ROW_2_3", x.first_row(2, 3));
  P("X_DEST_BASE_1", x.dest_base(1));
  P("X_DEST_ROWS_1", x.dest_rows(1));
  P("X_SRC_BASE_2", x.src_base(2));
  P("X_SRC_ROWS_3", x.src_rows(3));
  P("X_RECV_TOTAL", x.recv_total());
  P("X_EXPERT_COUNT_4", x.expert_count(4));
  P("X_WORDS", x.words());
  P("X_BLOCK_BYTES", x.block_bytes());
  P("X_HOST_BLOCK_BYTES", x.host_block_bytes());
  P("DSTATE_DISPATCH_SEQ", DSTATE_DISPATCH_SEQ);
  P("DSTATE_COMBINE_SEQ", DSTATE_COMBINE_SEQ);
  P("DSTATE_WORDS", DSTATE_WORDS);
  return 0;
}

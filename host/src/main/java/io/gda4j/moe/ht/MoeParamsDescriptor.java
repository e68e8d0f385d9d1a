package io.gda4j.moe.ht;

import io.gda4j.moe.core.MoeParamsHeaderDescriptor;

/**
 * The MoE parameter block: one per rank, in device memory, written once when the MoeBuffer is made; every
 * MoE kernel takes its address. The CUDA struct {@code gda4j::moe::MoeParams} ({@code gda4j/moe/params.cuh}) has the
 * same fields under the same names (checked by MoeParamsLayoutTest). Little-endian:
 * <pre>
 *       0  hdr  head  ({@link MoeParamsHeaderDescriptor}: magic, nranks, rank, hidden, dtype, top_k,
 *                      num_experts, num_local_experts)
 *      32  i32  num_channels
 *      36  i32  max_tokens
 *      40  i32  chunk_tokens
 *      44  i32  ring_tokens
 *      48  i32  payload_bytes
 *      52  i32  scales_per_row
 *      56  i32  scales_offset
 *      60  i32  meta_offset
 *      64  i32  dispatch_row_bytes
 *      68  i32  combine_row_bytes
 *      72  i32  combine_warps
 *      80  u64  dispatch_recv_ring  (heap offset)
 *      88  u64  dispatch_send_stage  (heap offset)
 *      96  u64  combine_recv_ring  (heap offset)
 *     104  u64  combine_send_stage  (heap offset)
 *     112  u64  signals  (heap offset)
 *     120  u64  token_slot  (device address)
 *     128  u64  channel_count  (device address)
 *     136  u64  tokens_per_rank  (device address)
 *     144  u64  tokens_per_expert  (device address)
 *     152  u64  layout_status  (device address)
 *     160  u64  state  (device address)
 *     168  u64  wait_ns  (device address)
 *     176  u64  recv_channel_offset  (device address; direct worlds: [C][N dest], where this rank's rows begin)
 *     184  u64  recv_channel_count  (device address)
 *     192  u64  recv_total  (device address)
 *     200  u64  local_expert_counts  (device address)
 *     208  u64  recv_x  (device address)
 *     216  u64  recv_scales  (device address)
 *     224  u64  recv_topk_idx  (device address)
 *     232  u64  recv_topk_weights  (device address)
 *     240  u64  recv_src  (device address)
 *     248  u64  combined  (device address)
 *     256  u64  direct_recv  (heap offset; direct worlds: recv_x .. recv_src, laid out as in device memory)
 *     264  u64  combine_landing  (heap offset; direct worlds: [N expert rank][max_tokens][combine_row_bytes],
 *                                  or a pulling combine's input)
 *     272  u64  direct_recv_bytes  (direct worlds: bytes of one region of the received tensors; two regions, by the
 *                                  dispatch's parity)
 *     280  u64  exchange  (device address; direct worlds: [2 parity] blocks of the layout exchange's results)
 *     288  u64  exchange_host  (device address of mapped host memory; direct worlds: [2 parity] host blocks: the u64
 *                               exchange sequence, written last, then the block's words)
 *     296  u64  expert_table  (heap offset; direct worlds: [2 parity][N source][num_local_experts] i32)
 *     304  u64  direct_state  (device address; direct worlds: DSTATE_WORDS u64 words)
 *     312  u64  ce_landing  (heap offset; copy-engine worlds: [N expert rank][max_tokens][combine_row_bytes])
 *     320  u64  stage_x  (device address; copy-engine worlds: [N dest][max_tokens][payload_bytes])
 *     328  u64  stage_scales  (device address; copy-engine worlds: [N dest][max_tokens][scales_per_row] f32)
 *     336  u64  stage_topk_idx  (device address; copy-engine worlds: [N dest][max_tokens][top_k] i32)
 *     344  u64  stage_topk_weights  (device address; copy-engine worlds: [N dest][max_tokens][top_k] f32)
 *     352  u64  stage_src  (device address; copy-engine worlds: [N dest][max_tokens][2] i32)
 *    360  (length)
 * </pre>
 * Heap offsets address the symmetric heap (valid on every rank); device addresses point into the rank's own MoE
 * device memory (see {@link HighThroughputSizing}). With host transfers (the copy engines over the proxy)
 * direct_state and stage_* point into the rank's heap instead, and the expert table is followed by
 * [2 parity][N dest][num_local_experts] i32: this rank's share for each peer, put from there.
 */
public final class MoeParamsDescriptor {
    /** "MOE1": a kernel given something else refuses to run. */
    public static final int PARAMS_MAGIC = 0x31454f4d;
    /** Where the {@link MoeParamsHeaderDescriptor header} starts. */
    public static final int HEAD_OFFSET = 0;
    public static final int NUM_CHANNELS_OFFSET = 32;
    public static final int MAX_TOKENS_OFFSET = 36;
    public static final int CHUNK_TOKENS_OFFSET = 40;
    public static final int RING_TOKENS_OFFSET = 44;
    public static final int PAYLOAD_BYTES_OFFSET = 48;
    public static final int SCALES_PER_ROW_OFFSET = 52;
    public static final int SCALES_OFFSET_OFFSET = 56;
    public static final int META_OFFSET_OFFSET = 60;
    public static final int DISPATCH_ROW_BYTES_OFFSET = 64;
    public static final int COMBINE_ROW_BYTES_OFFSET = 68;
    public static final int COMBINE_WARPS_OFFSET = 72;
    public static final int PAD0_OFFSET = 76;
    public static final int DISPATCH_RECV_RING_OFFSET = 80;
    public static final int DISPATCH_SEND_STAGE_OFFSET = 88;
    public static final int COMBINE_RECV_RING_OFFSET = 96;
    public static final int COMBINE_SEND_STAGE_OFFSET = 104;
    public static final int SIGNALS_OFFSET = 112;
    public static final int TOKEN_SLOT_OFFSET = 120;
    public static final int CHANNEL_COUNT_OFFSET = 128;
    public static final int TOKENS_PER_RANK_OFFSET = 136;
    public static final int TOKENS_PER_EXPERT_OFFSET = 144;
    public static final int LAYOUT_STATUS_OFFSET = 152;
    public static final int STATE_OFFSET = 160;
    public static final int WAIT_NS_OFFSET = 168;
    public static final int RECV_CHANNEL_OFFSET_OFFSET = 176;
    public static final int RECV_CHANNEL_COUNT_OFFSET = 184;
    public static final int RECV_TOTAL_OFFSET = 192;
    public static final int LOCAL_EXPERT_COUNTS_OFFSET = 200;
    public static final int RECV_X_OFFSET = 208;
    public static final int RECV_SCALES_OFFSET = 216;
    public static final int RECV_TOPK_IDX_OFFSET = 224;
    public static final int RECV_TOPK_WEIGHTS_OFFSET = 232;
    public static final int RECV_SRC_OFFSET = 240;
    public static final int COMBINED_OFFSET = 248;
    public static final int DIRECT_RECV_OFFSET = 256;
    public static final int COMBINE_LANDING_OFFSET = 264;
    public static final int DIRECT_RECV_BYTES_OFFSET = 272;
    public static final int EXCHANGE_OFFSET = 280;
    public static final int EXCHANGE_HOST_OFFSET = 288;
    public static final int EXPERT_TABLE_OFFSET = 296;
    public static final int DIRECT_STATE_OFFSET = 304;
    public static final int CE_LANDING_OFFSET = 312;
    public static final int STAGE_X_OFFSET = 320;
    public static final int STAGE_SCALES_OFFSET = 328;
    public static final int STAGE_TOPK_IDX_OFFSET = 336;
    public static final int STAGE_TOPK_WEIGHTS_OFFSET = 344;
    public static final int STAGE_SRC_OFFSET = 352;
    public static final int LENGTH = 360;

    private MoeParamsDescriptor() {
    }
}

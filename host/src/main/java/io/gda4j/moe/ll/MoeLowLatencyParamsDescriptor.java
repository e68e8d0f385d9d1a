package io.gda4j.moe.ll;

import io.gda4j.moe.core.MoeParamsHeaderDescriptor;

/**
 * The low-latency MoE parameter block: one per rank, built once when the {@link LowLatencyBuffer} is made; every
 * low-latency kernel takes it by value (kernel parameter memory, {@code const __grid_constant__ LlParams}), so no
 * field read costs a memory round trip. The CUDA struct
 * {@code gda4j::moe::LlParams} ({@code gda4j/moe/ll_params.cuh}) has the same fields under the same names (checked
 * by MoeLowLatencyParamsLayoutTest). Little-endian; {@link LowLatencySizing} describes what the offsets point at:
 * <pre>
 *        0  hdr  head  ({@link MoeParamsHeaderDescriptor}: magic, nranks, rank, hidden, dtype, top_k,
 *                       num_experts, num_local_experts)
 *       32  i32  max_tokens
 *       36  i32  slots_per_expert
 *       40  i32  payload_bytes
 *       44  i32  scales_per_row
 *       48  i32  power_of_two_scales
 *       52  i32  msg_bytes  (bytes of a staged row message; 0: no staging)
 *       56  u64  region  (heap offset of buffer 0)
 *       64  u64  buffer_bytes  (heap bytes of a buffer)
 *       72  u64  recv_x  (offset in a buffer)
 *       80  u64  recv_scales  (offset in a buffer)
 *       88  u64  recv_src  (offset in a buffer)
 *       96  u64  combine_recv  (offset in a buffer)
 *      104  u64  recv_msg  (offset in a buffer)
 *      112  u64  send_msg  (offset in a buffer)
 *      120  u64  combine_input  (offset in a buffer)
 *      128  u64  signals  (heap offset)
 *      136  u64  status  (device address)
 *      144  u64  seq  (device address)
 *      152  u64  wait_ns  (device address)
 *      160  u64  buffer_state  (device address of buffer 0's state)
 *      168  u64  state_bytes  (bytes of a buffer's state)
 *      176  u64  route_slot  (offset in a state)
 *      184  u64  send_count  (offset in a state)
 *      192  u64  send_base  (offset in a state)
 *      200  u64  send_done  (offset in a state)
 *      208  u64  recv_count_src  (offset in a state)
 *      216  u64  recv_count  (offset in a state)
 *      224  u64  combined  (offset in a state)
 *      232  u64  combine_ready  (offset in a state)
 *      240  u64  tables  (offset in a buffer: the count tables batched pairs fill, [N][L] u64)
 *      248  u64  combine_stage  (offset in a buffer)
 *      256  u64  recv_offset_src  (offset in a state)
 *      264  u64  combine_done  (offset in a state)
 *      272  u64  token_stage  (offset in a buffer)
 *      280  i32  stage_row_bytes  (bytes of a token stage row; 0: p2p rows are not gathered)
 *      284  i32  tagged  (1: the tagged protocol, ll_tagged.cuh; 0: the counted one)
 *      288  u64  tag_counts  (offset in a buffer)
 *      296  u64  tag_rows  (offset in a buffer)
 *      304  i32  tag_count_words  (tagged words of a count vector)
 *      308  i32  tag_header_words  (tagged words of a row's header)
 *      312  i32  tag_scale_word  (a tagged row's first scale word)
 *      316  i32  tag_row_words  (tagged words of a row)
 *      320  (length)
 * </pre>
 */
public final class MoeLowLatencyParamsDescriptor {
    /** "MOL1": a kernel given something else refuses to run. */
    public static final int PARAMS_MAGIC = 0x314c4f4d;
    /** Where the {@link MoeParamsHeaderDescriptor header} starts. */
    public static final int HEAD_OFFSET = 0;
    public static final int MAX_TOKENS_OFFSET = 32;
    public static final int SLOTS_PER_EXPERT_OFFSET = 36;
    public static final int PAYLOAD_BYTES_OFFSET = 40;
    public static final int SCALES_PER_ROW_OFFSET = 44;
    public static final int POWER_OF_TWO_SCALES_OFFSET = 48;
    public static final int MSG_BYTES_OFFSET = 52;
    public static final int REGION_OFFSET = 56;
    public static final int BUFFER_BYTES_OFFSET = 64;
    public static final int RECV_X_OFFSET = 72;
    public static final int RECV_SCALES_OFFSET = 80;
    public static final int RECV_SRC_OFFSET = 88;
    public static final int COMBINE_RECV_OFFSET = 96;
    public static final int RECV_MSG_OFFSET = 104;
    public static final int SEND_MSG_OFFSET = 112;
    public static final int COMBINE_INPUT_OFFSET = 120;
    public static final int SIGNALS_OFFSET = 128;
    public static final int STATUS_OFFSET = 136;
    public static final int SEQ_OFFSET = 144;
    public static final int WAIT_NS_OFFSET = 152;
    public static final int BUFFER_STATE_OFFSET = 160;
    public static final int STATE_BYTES_OFFSET = 168;
    public static final int ROUTE_SLOT_OFFSET = 176;
    public static final int SEND_COUNT_OFFSET = 184;
    public static final int SEND_BASE_OFFSET = 192;
    public static final int SEND_DONE_OFFSET = 200;
    public static final int RECV_COUNT_SRC_OFFSET = 208;
    public static final int RECV_COUNT_OFFSET = 216;
    public static final int COMBINED_OFFSET = 224;
    public static final int COMBINE_READY_OFFSET = 232;
    public static final int TABLES_OFFSET = 240;
    public static final int COMBINE_STAGE_OFFSET = 248;
    public static final int RECV_OFFSET_SRC_OFFSET = 256;
    public static final int COMBINE_DONE_OFFSET = 264;
    public static final int TOKEN_STAGE_OFFSET = 272;
    public static final int STAGE_ROW_BYTES_OFFSET = 280;
    public static final int TAGGED_OFFSET = 284;
    public static final int TAG_COUNTS_OFFSET = 288;
    public static final int TAG_ROWS_OFFSET = 296;
    public static final int TAG_COUNT_WORDS_OFFSET = 304;
    public static final int TAG_HEADER_WORDS_OFFSET = 308;
    public static final int TAG_SCALE_WORD_OFFSET = 312;
    public static final int TAG_ROW_WORDS_OFFSET = 316;
    public static final int LENGTH = 320;
    /** Warps per block of the token-parallel kernels: dispatch send (they share a token's row), combine receive. */
    public static final int TOKEN_WARPS = 8;
    /**
     * Channels a warp of the dispatch send moves per step (16 per lane). The host gives a token as many blocks
     * (parts) as it takes for each warp to hold at most one such chunk of the row.
     */
    public static final int SEND_CHUNK = 512;
    /**
     * Tagged pairs a lane of the tagged dispatch's receive loads at once: one warp's segment of a row (4 FP8 chunks,
     * 2 BF16). The host sizes the receive's grid with the segments a row has ({@link LowLatencySizing#tagSegments()}).
     */
    public static final int TAG_SEGMENT_PAIRS = 8;

    private MoeLowLatencyParamsDescriptor() {
    }
}

package io.gda4j.moe.core;

import io.gda4j.moe.tensor.ElementType;

import java.nio.ByteBuffer;

/**
 * The 32 bytes both MoE parameter blocks begin with (io.gda4j.moe.ht.MoeParamsDescriptor, high throughput, and
 * io.gda4j.moe.ll.MoeLowLatencyParamsDescriptor, low latency): which block it is, the world, and the shape. The CUDA struct
 * {@code gda4j::moe::MoeParamsHeader} ({@code gda4j/moe/params_header.cuh}) has the same fields under the same
 * names, as the member {@code head} of both blocks; each block's layout test checks it there. Little-endian:
 * <pre>
 *       0  u32  magic  (the block's PARAMS_MAGIC: a kernel given the other block refuses to run)
 *       4  i32  nranks
 *       8  i32  rank
 *      12  i32  hidden
 *      16  i32  dtype  ({@link ElementType#code()}: the dispatched element type)
 *      20  i32  top_k
 *      24  i32  num_experts
 *      28  i32  num_local_experts
 *      32  (length)
 * </pre>
 */
public final class MoeParamsHeaderDescriptor {
    public static final int MAGIC_OFFSET = 0;
    public static final int NRANKS_OFFSET = 4;
    public static final int RANK_OFFSET = 8;
    public static final int HIDDEN_OFFSET = 12;
    public static final int DTYPE_OFFSET = 16;
    public static final int TOP_K_OFFSET = 20;
    public static final int NUM_EXPERTS_OFFSET = 24;
    public static final int NUM_LOCAL_EXPERTS_OFFSET = 28;
    public static final int LENGTH = 32;

    private MoeParamsHeaderDescriptor() {
    }

    /**
     * Writes the header at {@code at} in {@code block} (a little-endian parameter block): the one place either
     * buffer's rank fills it in.
     *
     * @param magic the block's PARAMS_MAGIC
     * @param type  the dispatched element type
     */
    public static void write(ByteBuffer block, int at, int magic, int nranks, int rank, int hidden, ElementType type,
                      int topK, int numExperts, int numLocalExperts) {
        block.putInt(at + MAGIC_OFFSET, magic);
        block.putInt(at + NRANKS_OFFSET, nranks);
        block.putInt(at + RANK_OFFSET, rank);
        block.putInt(at + HIDDEN_OFFSET, hidden);
        block.putInt(at + DTYPE_OFFSET, type.code());
        block.putInt(at + TOP_K_OFFSET, topK);
        block.putInt(at + NUM_EXPERTS_OFFSET, numExperts);
        block.putInt(at + NUM_LOCAL_EXPERTS_OFFSET, numLocalExperts);
    }
}

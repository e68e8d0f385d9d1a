package io.gda4j.nic.mlx5;

import io.gda4j.mlx5.WqeDescriptor;

/**
 * How big a queue libmlx5 makes for a request, so that a QP gets the send queue a {@code QpSpec} asks for without
 * being eight times larger, and a CQ at least as deep as that send queue.
 *
 * <p>libmlx5 ({@code providers/mlx5/verbs.c}, {@code mlx5_calc_send_wqe} and {@code mlx5_calc_sq_size}) sizes the
 * send queue in bytes: {@code roundup_pow_of_two(max_send_wr * wqe_size)}, where {@code wqe_size} is the largest
 * WQE the QP was created for, rounded up to 64 bytes:
 * {@code max(overhead + max_send_sge * 16, overhead + align(4 + max_inline_data, 16))}. For an RC QP made with
 * {@code ibv_create_qp} the overhead is 192 bytes: a ctrl segment plus room for the memory-window/UMR segments
 * ({@code 16 + 48 + 64 + 64}), which exceed raddr + atomic (48). gda4j's WQEs are much smaller (a WRITE is one
 * WQEBB), so asking for {@code sqWqebbs} work requests would give up to 8x the WQEBBs; this class asks for
 * {@code sqWqebbs * 64 / wqe_size} instead, which rounds up to exactly {@code sqWqebbs} WQEBBs. The formula is
 * rdma-core's and may move; {@link #next} corrects a wrong guess from what was granted.
 *
 * <p>A CQ made with {@code ibv_create_cq(cqe)} has {@code roundup_pow_of_two(cqe + 1)} entries
 * ({@code mlx5_create_cq}), so asking for {@code n - 1} gives exactly {@code n} for a power of two.
 */
final class Mlx5QueueSizing {
    /** rdma-core's send-queue overhead of an RC WQE ({@code sq_overhead}), in bytes. */
    static final int RC_SQ_OVERHEAD_BYTES = 192;
    /** {@code struct mlx5_wqe_inl_data_seg}: the inline byte count word. */
    static final int INLINE_HEADER_BYTES = WqeDescriptor.INLINE_HEADER_SIZE;
    /** gda4j's WQEs have one data segment. */
    static final int SEND_SGES = 1;
    /** Largest descriptor sizes ({@code max_sq_desc_sz}) of ConnectX generations, tried in this order. */
    static final int[] DESCRIPTOR_SIZES = {1024, 512, 256};

    /** The next attempt: ask for {@code maxSendWr} WRs with a CQ of at least {@code cqEntries} CQEs. */
    record Attempt(int maxSendWr, int cqEntries) {
    }

    private Mlx5QueueSizing() {
    }

    /** libmlx5's {@code wqe_size} for a QP made with {@code maxInlineBytes} inline and one SGE. */
    static int sendWqeBytes(int maxInlineBytes) {
        int size = RC_SQ_OVERHEAD_BYTES + SEND_SGES * WqeDescriptor.DATA_SIZE;
        int inline = maxInlineBytes > 0 ? RC_SQ_OVERHEAD_BYTES + align(INLINE_HEADER_BYTES + maxInlineBytes,
                WqeDescriptor.SEGMENT_SIZE) : 0;
        return align(Math.max(size, inline), WqeDescriptor.WQEBB_SIZE);
    }

    /** The largest inline payload a QP can ask for when the device's descriptors hold {@code descriptorBytes}. */
    static int maxInlineFor(int descriptorBytes) {
        return Math.max(0, descriptorBytes - RC_SQ_OVERHEAD_BYTES - INLINE_HEADER_BYTES);
    }

    /** The first attempt for a send queue of {@code sqWqebbs} and a CQ of {@code cqEntries}. */
    static Attempt first(int sqWqebbs, int cqEntries, int maxInlineBytes) {
        int wqeBytes = sendWqeBytes(maxInlineBytes);
        int maxSendWr = Math.max(1, (int) ((long) sqWqebbs * WqeDescriptor.WQEBB_SIZE / wqeBytes));
        return new Attempt(maxSendWr, Math.max(cqEntries, predictedWqebbs(maxSendWr, wqeBytes)));
    }

    /** WQEBBs libmlx5 gives {@code maxSendWr} WQEs of {@code wqeBytes}. */
    static int predictedWqebbs(int maxSendWr, int wqeBytes) {
        return roundUpPowerOfTwo((long) maxSendWr * wqeBytes) / WqeDescriptor.WQEBB_SIZE;
    }

    /** What to pass to {@code ibv_create_cq} for a ring of at least {@code cqEntries} (a power of two) CQEs. */
    static int cqRequest(int cqEntries) {
        return Math.max(1, cqEntries - 1);
    }

    /**
     * Whether what was granted fits the spec: null when it does, else the attempt that will. The send queue must
     * hold at least {@code wantSq} WQEBBs; the CQ at least {@code wantCq} CQEs and no fewer than the send queue's
     * WQEBBs (every WQE is signaled, so that many CQEs can be outstanding).
     */
    static Attempt next(Attempt tried, int wantSq, int wantCq, int grantedSq, int grantedCq) {
        int maxSendWr = tried.maxSendWr();
        if (grantedSq < wantSq) {
            // granted and wanted are powers of two, so the ratio is exact.
            maxSendWr = (int) Math.min(Integer.MAX_VALUE, (long) maxSendWr * (wantSq / Math.max(1, grantedSq)));
        }
        int cq = Math.max(wantCq, grantedSq < wantSq ? wantSq : grantedSq);
        if (maxSendWr == tried.maxSendWr() && grantedCq >= cq) {
            return null;
        }
        return new Attempt(maxSendWr, Math.max(cq, tried.cqEntries()));
    }

    static int roundUpPowerOfTwo(long value) {
        if (value <= 1) {
            return 1;
        }
        long p = Long.highestOneBit(value - 1) << 1;
        if (p > (1 << 30)) {
            throw new IllegalArgumentException("queue of " + value + " bytes is too large");
        }
        return (int) p;
    }

    private static int align(int value, int alignment) {
        return (value + alignment - 1) / alignment * alignment;
    }
}

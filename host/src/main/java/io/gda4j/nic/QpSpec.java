package io.gda4j.nic;

import io.gda4j.cuda.CudaContext;

import java.util.Objects;

/**
 * What to create a queue pair for.
 *
 * @param gpu             the GPU that posts on the QP and whose memory its local data segments name; the rings are
 *                        mapped into it
 * @param sqWqebbs        send queue size in 64-byte WQEBBs, a power of two (the NIC may grant more, never less)
 * @param cqEntries       send CQ size in CQEs, a power of two, at least {@code sqWqebbs} (gda4j signals every
 *                        WQE, so with at most {@code sqWqebbs} WQEs outstanding the CQ cannot overrun)
 * @param maxInlineBytes  largest inline WRITE payload the QP must accept
 * @param label           for messages, e.g. {@code "rank 0 -> rank 1"}
 */
public record QpSpec(CudaContext gpu, int sqWqebbs, int cqEntries, int maxInlineBytes, String label) {
    /** Default send queue depth in WQEBBs. */
    public static final int DEFAULT_SQ_WQEBBS = 1024;
    /** Default inline limit: the device API's {@code put_inline} slot and 8-byte signals fit. */
    public static final int DEFAULT_MAX_INLINE_BYTES = 256;

    public QpSpec {
        Objects.requireNonNull(label, "label");
        if (sqWqebbs < 1 || Integer.bitCount(sqWqebbs) != 1 || sqWqebbs > (1 << 15)) {
            throw new IllegalArgumentException(label + ": the send queue size must be a power of two from 1 to 32768"
                    + " WQEBBs (the doorbell counter is 16-bit), not " + sqWqebbs);
        }
        if (cqEntries < sqWqebbs || Integer.bitCount(cqEntries) != 1) {
            throw new IllegalArgumentException(label + ": the CQ must be a power of two of at least the send queue's "
                    + sqWqebbs + " entries, not " + cqEntries);
        }
        if (maxInlineBytes < 0) {
            throw new IllegalArgumentException(label + ": negative inline limit " + maxInlineBytes);
        }
    }

    /** A QP of {@code sqWqebbs} WQEBBs, a CQ as deep, and the default inline limit. */
    public static QpSpec of(CudaContext gpu, int sqWqebbs, String label) {
        return new QpSpec(gpu, sqWqebbs, sqWqebbs, DEFAULT_MAX_INLINE_BYTES, label);
    }
}

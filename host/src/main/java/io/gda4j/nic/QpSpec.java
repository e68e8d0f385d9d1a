package io.gda4j.nic;

import io.gda4j.cuda.CudaContext;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

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
 * @param remoteAccess    the QP's own access flags ({@code qp_access_flags}): which requests from its peer it answers
 *                        (REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC); a request it does not allow fails at the
 *                        requester with a remote invalid-request error, whatever the target region allows
 * @param maxRdAtomic     RDMA READs and atomics this QP keeps in flight as a requester ({@code max_rd_atomic}, 1 to
 *                        {@link #MAX_RD_ATOMIC}); one more waits for the oldest to complete
 * @param maxDestRdAtomic RDMA READs and atomics from its peer this QP takes at once as a responder
 *                        ({@code max_dest_rd_atomic}, 0 to {@link #MAX_RD_ATOMIC}); a peer that keeps more in flight
 *                        gets a remote invalid-request error
 * @param rings           where the send queue, doorbell record and CQ live ({@link RingPlacement#GPU}: in the GPU's
 *                        memory, where the NIC supports it: {@link Nic#gpuRingsUnsupportedReason})
 */
public record QpSpec(CudaContext gpu, int sqWqebbs, int cqEntries, int maxInlineBytes, String label,
                     Set<NicAccess> remoteAccess, int maxRdAtomic, int maxDestRdAtomic, RingPlacement rings) {
    /** Default send queue depth in WQEBBs. */
    public static final int DEFAULT_SQ_WQEBBS = 1024;
    /** Default inline limit: the device API's {@code put_inline} slot and 8-byte signals fit. */
    public static final int DEFAULT_MAX_INLINE_BYTES = 256;
    /** Largest {@code max_rd_atomic} / {@code max_dest_rd_atomic} a ConnectX-7 grants ({@code max_qp_rd_atom}). */
    public static final int MAX_RD_ATOMIC = 16;
    /** What a QP answers by default: everything a symmetric heap's peer does. */
    public static final Set<NicAccess> DEFAULT_REMOTE_ACCESS =
            Set.of(NicAccess.REMOTE_WRITE, NicAccess.REMOTE_READ, NicAccess.REMOTE_ATOMIC);

    /** A QP that answers every request and keeps {@link #MAX_RD_ATOMIC} READs and atomics in flight each way. */
    public QpSpec(CudaContext gpu, int sqWqebbs, int cqEntries, int maxInlineBytes, String label) {
        this(gpu, sqWqebbs, cqEntries, maxInlineBytes, label, DEFAULT_REMOTE_ACCESS, MAX_RD_ATOMIC, MAX_RD_ATOMIC,
                RingPlacement.HOST);
    }

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
        if (maxRdAtomic < 1 || maxRdAtomic > MAX_RD_ATOMIC || maxDestRdAtomic < 0 || maxDestRdAtomic > MAX_RD_ATOMIC) {
            throw new IllegalArgumentException(label + ": max_rd_atomic must be 1 to " + MAX_RD_ATOMIC
                    + " and max_dest_rd_atomic 0 to " + MAX_RD_ATOMIC + ", not " + maxRdAtomic + " and "
                    + maxDestRdAtomic);
        }
        remoteAccess = remoteAccess.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(remoteAccess));
        Objects.requireNonNull(rings, "rings");
    }

    /** The same QP with other access flags and READ/atomic depths. */
    public QpSpec withRemote(Set<NicAccess> access, int rdAtomic, int destRdAtomic) {
        return new QpSpec(gpu, sqWqebbs, cqEntries, maxInlineBytes, label, access, rdAtomic, destRdAtomic, rings);
    }

    /** The same QP with its rings at {@code placement}. */
    public QpSpec withRings(RingPlacement placement) {
        return new QpSpec(gpu, sqWqebbs, cqEntries, maxInlineBytes, label, remoteAccess, maxRdAtomic, maxDestRdAtomic,
                placement);
    }

    /** A QP of {@code sqWqebbs} WQEBBs, a CQ as deep, and the default inline limit. */
    public static QpSpec of(CudaContext gpu, int sqWqebbs, String label) {
        return new QpSpec(gpu, sqWqebbs, sqWqebbs, DEFAULT_MAX_INLINE_BYTES, label);
    }
}

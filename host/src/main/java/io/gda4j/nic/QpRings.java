package io.gda4j.nic;

/**
 * Where a QP's rings are, as one address space sees them: {@link NicQp#deviceRings()} gives GPU virtual addresses
 * (what {@code io.gda4j.ibgda.DeviceQp} writes into GPU memory for the kernel), {@link NicQp#hostRings()} host
 * virtual addresses (what {@link HostPoster} uses). Layouts are mlx5's: {@code io.gda4j.mlx5.WqeDescriptor},
 * {@code DoorbellRecordDescriptor}, {@code DoorbellDescriptor}, {@code CqeDescriptor}.
 *
 * @param qpn            24-bit QP number, the qpn of every ctrl segment and of the doorbell
 * @param sqBuf          send queue ring of {@code sqWqebbs * 64} bytes
 * @param sqWqebbs       send queue size in WQEBBs, a power of two
 * @param dbrec          the QP's 8-byte doorbell record (send counter in the second BE32 word)
 * @param doorbell       the 8-byte doorbell register
 * @param doorbellKind   how the register must be stored to
 * @param cqBuf          send CQ ring of {@code cqeCount * 64} bytes, initialised to INVALID CQEs with owner 0
 * @param cqeCount       CQEs in the ring, a power of two, at least {@code sqWqebbs}
 * @param cqDbrec        the CQ's doorbell record: its first BE32 word takes the consumer index
 *                       ({@code BE32(ci & 0xffffff)}) after CQEs are consumed
 * @param maxInlineBytes largest inline payload the QP accepts
 */
public record QpRings(int qpn, long sqBuf, int sqWqebbs, long dbrec, long doorbell, DoorbellKind doorbellKind,
                      long cqBuf, int cqeCount, long cqDbrec, int maxInlineBytes) {
    public QpRings {
        if (Integer.bitCount(sqWqebbs) != 1 || Integer.bitCount(cqeCount) != 1 || cqeCount < sqWqebbs) {
            throw new IllegalArgumentException("ring sizes must be powers of two with CQEs >= WQEBBs, not SQ "
                    + sqWqebbs + " / CQ " + cqeCount);
        }
        if (sqBuf == 0 || dbrec == 0 || doorbell == 0 || cqBuf == 0 || cqDbrec == 0) {
            throw new IllegalArgumentException(String.format("QP 0x%06x: every ring address must be set", qpn));
        }
        if ((sqBuf & 63) != 0 || (cqBuf & 63) != 0 || (dbrec & 7) != 0 || (doorbell & 7) != 0
                || (cqDbrec & 7) != 0) {
            throw new IllegalArgumentException(String.format("QP 0x%06x: rings must be 64-byte and doorbell"
                    + " words 8-byte aligned", qpn));
        }
    }
}

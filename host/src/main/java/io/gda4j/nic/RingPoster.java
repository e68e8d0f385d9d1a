package io.gda4j.nic;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.CqDoorbellRecordDescriptor;
import io.gda4j.mlx5.CqeDecoder;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.mlx5.WqeEncoder;

import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.concurrent.TimeoutException;

/**
 * The {@link HostPoster} that writes WQEs itself, with the same encoder, doorbell protocol and completion rules the
 * GPU uses: the emulated NIC's QPs (whose doorbell is a word of host memory its engine thread polls) and tests.
 *
 * <p>Protocol: {@code post*} reserves WQEBBs (polling the CQ while the ring is full: a slot is never rewritten
 * before the CQE that retires it), writes the WQE with plain stores and asks for a CQE (every WQE is signaled, so
 * every slot is retired by a CQE of its own). {@link #ring()} publishes in rdma-core's order
 * ({@code post_send_db}): a barrier so the WQEs are visible first, a release store of the doorbell record's send
 * counter, a barrier, a release store of the 8-byte doorbell, a barrier ({@link DoorbellBarriers}). {@link #poll()}
 * consumes CQEs and publishes the CQ consumer index; an error CQE throws {@link CompletionErrorException} naming the
 * QP, the WQE index, the opcode and the syndrome. Counters count WQEBBs.
 *
 * <p>A real mlx5 QP is posted through libibverbs instead ({@code nic.mlx5.VerbsPoster}): its doorbell register is
 * write-combining MMIO, and only rdma-core's barriers ({@code dmb oshst} / {@code dsb st} on AArch64, which no JVM
 * fence emits) order stores toward it on every CPU.
 *
 * <p>Fence: a WQE posted while an earlier RDMA READ or atomic has not completed carries the mlx5 fence bit, so the
 * NIC does not execute it (and read its local source) before the READ's data or the atomic's fetched value has
 * landed; an RC QP keeps WQEs in order on the wire but promises no more. Inline payloads above the QP's
 * {@code max_inline} are refused before anything is written.
 */
public final class RingPoster implements HostPoster {
    /**
     * The CPU barriers around a host doorbell, named after rdma-core's ({@code util/udma_barrier.h}) and run where its
     * mlx5 provider runs them: {@code udma_to_device_barrier()}, the doorbell record, {@code mmio_wc_start()}, the
     * doorbell store, {@code mmio_flush_writes()}. The emulated NIC's doorbell is host memory its engine thread reads,
     * for which the JVM's fences are exact; a seam, so that a test can record each barrier in its place.
     */
    public interface DoorbellBarriers {
        /** After the WQE stores, before the doorbell record store: the NIC reads WQEs once the record covers them. */
        void toDevice();

        /** After the doorbell record store, before the store to the write-combining doorbell register. */
        void beforeWriteCombining();

        /** After the doorbell store: pushes it out of the CPU's write-combining buffer now. */
        void flushWriteCombining();

        /** What the three barriers are on this CPU, in one line. */
        String description();

        /** The barriers for the CPU this JVM runs on. */
        static DoorbellBarriers forThisCpu() {
            return forArchitecture(System.getProperty("os.arch", ""));
        }

        /** The barriers for a JVM whose {@code os.arch} is {@code osArch}. */
        static DoorbellBarriers forArchitecture(String osArch) {
            String arch = osArch.strip().toLowerCase(Locale.ROOT);
            return arch.equals("amd64") || arch.equals("x86_64") ? JvmFences.X86_64 : JvmFences.WEAKLY_ORDERED;
        }
    }

    /** {@link DoorbellBarriers} made of the JVM's fences. */
    enum JvmFences implements DoorbellBarriers {
        /**
         * x86-64 keeps stores to write-back memory in order, so rdma-core's {@code udma_to_device_barrier} is only a
         * compiler barrier (here a release fence). Its {@code sfence} for write-combining becomes a full fence, a
         * locked instruction, which also drains the write-combining buffers (rdma-core's own choice on 32-bit x86).
         */
        X86_64("x86-64: release fence before the doorbell record; full fence (locked instruction, drains"
                + " write-combining) before and after the doorbell, as rdma-core's compiler barrier and sfence") {
            @Override
            public void toDevice() {
                VarHandle.releaseFence();
            }
        },
        /**
         * AArch64 and other weakly ordered CPUs: the JVM's full fence ({@code dmb ish} on AArch64) for all three,
         * which orders the stores for another core (the emulated NIC's engine thread). A real NIC's write-combining
         * UAR would need rdma-core's {@code dmb oshst} / {@code dsb st}, which is why mlx5 QPs post through libibverbs.
         */
        WEAKLY_ORDERED("weakly ordered CPU (AArch64 and others): the JVM's full fence for all three barriers (the"
                + " emulated NIC's engine is another core; real mlx5 QPs post through libibverbs)") {
            @Override
            public void toDevice() {
                VarHandle.fullFence();
            }
        };

        private final String description;

        JvmFences(String description) {
            this.description = description;
        }

        @Override
        public void beforeWriteCombining() {
            VarHandle.fullFence();
        }

        @Override
        public void flushWriteCombining() {
            VarHandle.fullFence();
        }

        @Override
        public String description() {
            return description;
        }
    }

    private static final DoorbellBarriers CPU_BARRIERS = DoorbellBarriers.forThisCpu();

    private final NicQp qp;
    private final DoorbellBarriers barriers;
    private final int qpn;
    private final ByteBuffer sq;
    private final ByteBuffer dbrec;
    private final ByteBuffer doorbell;
    private final ByteBuffer cq;
    private final ByteBuffer cqDbrec;
    private final int sqWqebbs;
    private final int maxInlineBytes;
    /** Counter after the last READ or atomic posted: later WQEs carry the fence bit until it has completed. */
    private long fetchEnd;
    private final byte[] wqeSizes;
    private long producer;
    private long rung;
    private long retired;
    private long cqConsumer;

    /** A poster over {@code qp}'s host rings, with this CPU's barriers. */
    public RingPoster(NicQp qp) {
        this(qp, CPU_BARRIERS);
    }

    /** A poster whose doorbells use {@code barriers} (tests record them). */
    RingPoster(NicQp qp, DoorbellBarriers barriers) {
        this.qp = qp;
        this.barriers = barriers;
        QpRings r = qp.hostRings();
        if (r.doorbellKind() == DoorbellKind.MMIO) {
            throw new IllegalArgumentException(qp.label() + ": its doorbell is a real NIC's write-combining register,"
                    + " which only rdma-core's barriers order on every CPU: post through libibverbs"
                    + " (NicQp.hostPoster() of an mlx5 QP)");
        }
        this.qpn = r.qpn();
        this.sqWqebbs = r.sqWqebbs();
        this.maxInlineBytes = r.maxInlineBytes();
        this.sq = map(r.sqBuf(), (long) r.sqWqebbs() * WqeDescriptor.WQEBB_SIZE);
        this.dbrec = map(r.dbrec(), DoorbellRecordDescriptor.SIZE);
        this.doorbell = map(r.doorbell(), DoorbellDescriptor.SIZE);
        this.cq = map(r.cqBuf(), (long) r.cqeCount() * 64);
        this.cqDbrec = map(r.cqDbrec(), CqDoorbellRecordDescriptor.SIZE);
        this.wqeSizes = new byte[sqWqebbs];
    }

    private static ByteBuffer map(long address, long length) {
        return new Pointer(address).getByteBuffer(0, length);
    }

    @Override
    public NicQp qp() {
        return qp;
    }

    /** WQEBBs written so far (the next WQE's counter). */
    @Override
    public long producerIndex() {
        return producer;
    }

    /** WQEBBs whose WQEs have completed. */
    @Override
    public long retiredIndex() {
        return retired;
    }

    /** Posts a signaled NOP; returns its WQE counter. */
    public long postNop(long timeoutNanos) throws TimeoutException {
        long at = reserve(1, timeoutNanos);
        finish(at, WqeEncoder.writeNop(sq, at, qpn, flags(at)));
        return at;
    }

    /** Posts a signaled RDMA WRITE; returns its WQE counter. */
    @Override
    public long postWrite(long raddr, int rkey, long laddr, int lkey, int byteCount, long timeoutNanos)
            throws TimeoutException {
        long at = reserve(1, timeoutNanos);
        finish(at, WqeEncoder.writeRdmaWrite(sq, at, qpn, flags(at), raddr, rkey, laddr, lkey,
                byteCount));
        return at;
    }

    /**
     * Posts a signaled inline RDMA WRITE of {@code payload}; returns its WQE counter. Throws
     * {@link IllegalArgumentException} for a payload above the QP's inline limit (the NIC would fail it).
     */
    @Override
    public long postWriteInline(long raddr, int rkey, byte[] payload, long timeoutNanos) throws TimeoutException {
        HostPoster.requireInline(qp, payload.length, maxInlineBytes);
        int wqebbs = WqeDescriptor.wqebbsForDs(WqeDescriptor.inlineDs(payload.length));
        long at = reserve(wqebbs, timeoutNanos);
        finish(at, WqeEncoder.writeRdmaWriteInline(sq, at, qpn, flags(at), raddr, rkey,
                payload, 0, payload.length));
        return at;
    }

    /** Posts a signaled RDMA READ; returns its WQE counter. */
    @Override
    public long postRead(long raddr, int rkey, long laddr, int lkey, int byteCount, long timeoutNanos)
            throws TimeoutException {
        long at = reserve(1, timeoutNanos);
        finish(at, WqeEncoder.writeRdmaRead(sq, at, qpn, flags(at), raddr, rkey, laddr, lkey,
                byteCount));
        fetchEnd = producer;
        return at;
    }

    /** Posts a signaled 8-byte ATOMIC_FA; the old value goes to {@code laddr}/{@code lkey}. */
    @Override
    public long postFetchAdd(long raddr, int rkey, long add, long laddr, int lkey, long timeoutNanos)
            throws TimeoutException {
        long at = reserve(1, timeoutNanos);
        finish(at, WqeEncoder.writeAtomicFetchAdd(sq, at, qpn, flags(at), raddr, rkey, add,
                laddr, lkey));
        fetchEnd = producer;
        return at;
    }

    /** Posts a signaled 8-byte ATOMIC_CS; the old value goes to {@code laddr}/{@code lkey}. */
    @Override
    public long postCompareSwap(long raddr, int rkey, long compare, long swap, long laddr, int lkey,
                                long timeoutNanos) throws TimeoutException {
        long at = reserve(1, timeoutNanos);
        finish(at, WqeEncoder.writeAtomicCompareSwap(sq, at, qpn, flags(at), raddr, rkey,
                compare, swap, laddr, lkey));
        fetchEnd = producer;
        return at;
    }

    /**
     * Rings the doorbell for everything posted, in rdma-core's order: {@link DoorbellBarriers#toDevice}, release store
     * of the doorbell record's send counter (read by the NIC, or checked by the emulated engine, after the doorbell),
     * {@link DoorbellBarriers#beforeWriteCombining}, release store of the 8-byte doorbell (pairs with the engine's
     * acquire load; the NIC acts on it), {@link DoorbellBarriers#flushWriteCombining}.
     */
    @Override
    public void ring() {
        if (rung == producer) {
            return;
        }
        barriers.toDevice();
        DoorbellRecordDescriptor.putSendCounterRelease(dbrec, 0, producer);
        barriers.beforeWriteCombining();
        DoorbellDescriptor.putDoorbellRelease(doorbell, 0, producer, qpn);
        barriers.flushWriteCombining();
        rung = producer;
    }

    /** The barriers this poster's doorbells use. */
    public DoorbellBarriers barriers() {
        return barriers;
    }

    /**
     * Consumes every CQE that has arrived, retiring the WQEs they complete, and publishes the CQ consumer index.
     * Returns the number consumed; throws {@link CompletionErrorException} at the first error CQE (it stays
     * consumed; the QP is in the error state and every later WQE completes with WR_FLUSH).
     */
    @Override
    public int poll() {
        int consumed = 0;
        try {
            while (CqeDecoder.poll(cq, cqConsumer) != CqeDecoder.EMPTY) {
                DecodedCqe cqe = CqeDecoder.decode(cq, cqConsumer);
                cqConsumer++;
                consumed++;
                long counter = retired + ((cqe.wqeCounter() - retired) & WqeDescriptor.WQE_INDEX_MASK);
                if (counter >= producer) {
                    throw new IllegalStateException(String.format("%s: CQE for WQE index %d, but only %d WQEBBs"
                            + " were posted (retired %d)", qp.label(), cqe.wqeCounter(), producer, retired));
                }
                retired = counter + wqeSizes[(int) (counter & (sqWqebbs - 1))];
                cqe.requireSuccess();
            }
        } finally {
            if (consumed > 0) {
                CqDoorbellRecordDescriptor.putConsumerIndexRelease(cqDbrec, 0, cqConsumer);
            }
        }
        return consumed;
    }

    /** Rings, then polls until every WQE posted has completed, or throws after {@code timeoutNanos}. */
    @Override
    public void quiet(long timeoutNanos) throws TimeoutException {
        ring();
        long deadline = System.nanoTime() + timeoutNanos;
        while (retired < producer) {
            if (poll() == 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw timeout("quiet", producer);
                }
                Thread.onSpinWait();
            }
        }
    }

    private long reserve(int wqebbs, long timeoutNanos) throws TimeoutException {
        if (qp.state() == QpState.RESET) {
            throw new IllegalStateException(qp.label() + ": connect the QP before posting");
        }
        long deadline = System.nanoTime() + timeoutNanos;
        while (producer + wqebbs - retired > sqWqebbs) {
            ring();
            if (poll() == 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw timeout("a free send queue slot", producer + wqebbs - sqWqebbs);
                }
                Thread.onSpinWait();
            }
        }
        return producer;
    }

    /** Signaled; fenced while an earlier READ or atomic (ending at fetchEnd) has not completed. */
    private int flags(long at) {
        boolean fence = at >= fetchEnd && retired < fetchEnd;
        return WqeDescriptor.FM_CE_SE_CQ_UPDATE | (fence ? WqeDescriptor.FM_CE_SE_FENCE : 0);
    }

    private void finish(long at, int wqebbs) {
        wqeSizes[(int) (at & (sqWqebbs - 1))] = (byte) wqebbs;
        producer = at + wqebbs;
    }

    private TimeoutException timeout(String what, long wanted) {
        return new TimeoutException(String.format("%s (QP 0x%06x on %s): waited for %s, but only %d of %d WQEBBs"
                        + " completed (wanted %d); the NIC stopped answering or the QP is not connected",
                qp.label(), qpn, qp.nic().name(), what, retired, producer, wanted));
    }
}

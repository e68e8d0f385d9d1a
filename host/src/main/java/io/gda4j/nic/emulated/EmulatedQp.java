package io.gda4j.nic.emulated;

import io.gda4j.mlx5.CqDoorbellRecordDescriptor;
import io.gda4j.mlx5.CqeDescriptor;
import io.gda4j.mlx5.CqeEncoder;
import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.nic.DoorbellKind;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpAddress;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.QpState;
import io.gda4j.nic.RingPlacement;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An emulated RC QP: its rings in one {@link RingMemory}, laid out
 * {@code [SQ | CQ | doorbell record (64 B line) | doorbell (64 B line) | CQ doorbell record (64 B line) |
 * fetch staging (16 x 8 B) | write staging (64 KiB)]}, and an executor. The staging areas hold what the NIC has
 * taken but not yet delivered: an atomic's fetched value until it "returns" (strict mode), a WRITE's payload while
 * it is still on its way into the target (writes that pass their CQE, relaxed ordering). The engine thread owns
 * {@link #consumed} and {@link #cqProducer}; state and peer are volatile because set-up threads change them.
 *
 * <p>States ({@link QpState}): {@link #connect} walks RESET, INIT, RTR, RTS; {@link #modify} makes any move verbs
 * allows, including the way back from ERROR (RESET, INIT, RTR, RTS). A doorbell rung in RESET, INIT or RTR is
 * dropped, never replayed; in SQD it is taken, but nothing starts until RTS.
 *
 * <p>Rings in GPU memory ({@code RingPlacement.GPU}): the SQ, the CQ and both doorbell records are also in a
 * {@link DeviceRingMemory} at the same offsets, where the GPU posts and polls; the host region's copies of them are
 * then the engine's mirror, which it fills by copies ({@link #pullDoorbellRecord}, {@link #pullWqes},
 * {@link #pullCqDoorbellRecord}) and from which each CQE goes out body first ({@link QpExecutor#publishCqe}). The
 * doorbell stays in host memory: it is the NIC's register. {@link #hostRings()} is refused then: only a GPU posts.
 */
final class EmulatedQp implements NicQp {
    static final int LINE = 64;
    /** Bytes of the fetch staging area: one 8-byte slot per READ/atomic a QP may keep in flight. */
    static final int FETCH_STAGING_BYTES = QpSpec.MAX_RD_ATOMIC * 8;
    /** Bytes of the write staging area: WRITE payloads held after their CQE; a larger WRITE is not held. */
    static final int WRITE_STAGING_BYTES = 64 * 1024;

    private final EmulatedNic nic;
    private final QpSpec spec;
    private final int qpn;
    final RingMemory rings;
    /** The rings in GPU memory, or null when they are in {@link #rings} itself. */
    final DeviceRingMemory deviceRingMemory;
    /** The whole of {@link #rings}: the engine's mirror of {@link #deviceRingMemory}. */
    private final ByteBuffer mirror;
    final QpExecutor executor;
    final ByteBuffer sq;
    final ByteBuffer cq;
    final ByteBuffer dbrec;
    final ByteBuffer doorbell;
    final ByteBuffer cqDbrec;
    final int sqWqebbs;
    final int cqeCount;
    final long cqOffset;
    final long dbrecOffset;
    final long doorbellOffset;
    final long cqDbrecOffset;
    final long fetchStagingOffset;
    final long writeStagingOffset;
    final int maxInlineBytes;

    /** Set by set-up threads (under {@link #setup}) and by the engine (to ERROR, never over a RESET). */
    private final AtomicReference<QpState> state = new AtomicReference<>(QpState.RESET);
    /** Serialises state changes made by set-up threads; the engine never takes it. */
    private final Object setup = new Object();
    private volatile EmulatedQp peer;
    /** The responder in another process this QP is connected to, or null ({@link #connectToProcess}). */
    private volatile RemoteResponder responder;
    private volatile boolean closed;
    /** Set by the engine when the QP can make no more progress at all (CQ overrun, platform failure). */
    volatile boolean dead;
    /** Set by {@link #modify} to RESET; the engine clears its own counters before it looks at the QP again. */
    volatile boolean resetPending;

    /** Engine thread only: the counter of the next WQEBB to execute. */
    long consumed;
    /** Engine thread only: the doorbell word as last read (0: never rung; no valid doorbell is 0, qpns are not). */
    long doorbellSeen;
    /** Engine thread only: the counter the last valid doorbell named; WQEs below it may execute. */
    long rungTo;
    /** Engine thread only: CQEs written (or queued) so far. */
    long cqProducer;
    /** Written by the engine, read by anyone: WQEs executed (including failed and flushed ones). */
    volatile long wqes;

    // Engine thread only, strict mode: RDMA READs and fetching atomics whose data has not "landed" yet, oldest first
    // (a ring of maxRdAtomic entries from parkedHead). Later WQEs without the fence bit run before they land; their
    // CQEs wait behind the oldest parked one's, which keeps completions in order. An atomic's fetched value waits in
    // its fetch staging slot.
    final long[] parkedDst;
    final long[] parkedSrc;
    final long[] parkedLength;
    final long[] parkedAt;
    int parkedHead;
    int parked;
    long parkedSinceNanos;
    /** Engine thread only: the WQE counter of a WQE being retried toward a peer that does not answer, or -1. */
    long retryingAt = -1;
    long retrySinceNanos;
    /** CQEs held back while a READ or atomic is parked: WQE counter, opcode and byte count, in posting order. */
    final long[] deferredAt;
    final int[] deferredOpcode;
    final int[] deferredBytes;
    int deferred;

    // Engine thread only: data whose CQE is written but which has not landed yet (copies not issued), in posting
    // order, since heldSinceNanos: READ data (writesPassCqe mode) and WRITE payloads staged in the write staging area
    // (writesPassCqe mode, or a relaxed-ordering target in strict mode). heldDomain: the key table (NIC) of the memory
    // it lands in, whose PCIe flush lands it; heldRelaxed: a relaxed-ordering region, so a later WRITE may pass it.
    final long[] heldDst;
    final long[] heldSrc;
    final long[] heldLength;
    final RegistrationTable[] heldDomain;
    final boolean[] heldRelaxed;
    int held;
    long heldSinceNanos;
    /** Engine thread only: bytes of the write staging area in use by held WRITEs. */
    long writeStagingUsed;

    EmulatedQp(EmulatedNic nic, QpSpec spec, int qpn, EmulatedPlatform platform) {
        this.nic = nic;
        this.spec = spec;
        this.qpn = qpn;
        this.sqWqebbs = spec.sqWqebbs();
        this.cqeCount = spec.cqEntries();
        this.maxInlineBytes = Math.min(spec.maxInlineBytes(), WqeDescriptor.MAX_INLINE_BYTES);
        int depth = spec.maxRdAtomic();
        this.parkedDst = new long[depth];
        this.parkedSrc = new long[depth];
        this.parkedLength = new long[depth];
        this.parkedAt = new long[depth];
        this.heldDomain = new RegistrationTable[sqWqebbs];
        this.heldRelaxed = new boolean[sqWqebbs];
        this.deferredAt = new long[sqWqebbs];
        this.deferredOpcode = new int[sqWqebbs];
        this.deferredBytes = new int[sqWqebbs];
        this.heldDst = new long[sqWqebbs];
        this.heldSrc = new long[sqWqebbs];
        this.heldLength = new long[sqWqebbs];
        long sqBytes = (long) sqWqebbs * WqeDescriptor.WQEBB_SIZE;
        long cqBytes = (long) cqeCount * CqeDescriptor.CQE_SIZE;
        this.cqOffset = sqBytes;
        this.dbrecOffset = sqBytes + cqBytes;
        this.doorbellOffset = dbrecOffset + LINE;
        this.cqDbrecOffset = doorbellOffset + LINE;
        this.fetchStagingOffset = cqDbrecOffset + LINE;
        this.writeStagingOffset = fetchStagingOffset + FETCH_STAGING_BYTES;
        long total = writeStagingOffset + WRITE_STAGING_BYTES;
        if (total > Integer.MAX_VALUE) {
            throw new NicException(spec.label() + ": rings of " + total + " bytes are too large for the emulated NIC");
        }
        this.rings = platform.allocateRings(spec, total);
        QpExecutor ex = null;
        DeviceRingMemory onGpu = null;
        try {
            if ((rings.hostAddress() & (LINE - 1)) != 0 || (rings.deviceAddress() & (LINE - 1)) != 0) {
                throw new NicException("ring memory for " + spec.label() + " is not 64-byte aligned");
            }
            ByteBuffer all = rings.buffer();
            this.mirror = all;
            this.sq = all.slice(0, (int) sqBytes);
            this.cq = all.slice((int) cqOffset, (int) cqBytes);
            this.dbrec = all.slice((int) dbrecOffset, DoorbellRecordDescriptor.SIZE);
            this.doorbell = all.slice((int) doorbellOffset, DoorbellDescriptor.SIZE);
            this.cqDbrec = all.slice((int) cqDbrecOffset, CqDoorbellRecordDescriptor.SIZE);
            CqeEncoder.initialize(cq);
            if (spec.rings() == RingPlacement.GPU) {
                onGpu = platform.allocateDeviceRings(spec, cqDbrecOffset + LINE);
                if ((onGpu.deviceAddress() & (LINE - 1)) != 0) {
                    throw new NicException("GPU ring memory for " + spec.label() + " is not 64-byte aligned");
                }
                onGpu.copyFromHost(cqOffset, cqBytes, all); // every CQE INVALID, owner 0, as on the host
                ex = platform.createExecutor(spec, rings, onGpu);
            } else {
                ex = platform.createExecutor(spec, rings);
            }
        } catch (RuntimeException e) {
            if (onGpu != null) {
                onGpu.close();
            }
            rings.close();
            throw e;
        }
        this.deviceRingMemory = onGpu;
        this.executor = ex;
    }

    /** GPU rings: the doorbell record into the mirror (after the doorbell was read: it covers it). */
    void pullDoorbellRecord() {
        if (deviceRingMemory != null) {
            deviceRingMemory.copyToHost(dbrecOffset, DoorbellRecordDescriptor.SIZE, mirror);
        }
    }

    /** GPU rings: the WQEBBs of counters {@code [from, to)} into the mirror (a doorbell covered them). */
    void pullWqes(long from, long to) {
        if (deviceRingMemory == null || to <= from) {
            return;
        }
        long count = Math.min(to - from, sqWqebbs);
        long first = from & (sqWqebbs - 1);
        long run = Math.min(count, sqWqebbs - first);
        deviceRingMemory.copyToHost(first * WqeDescriptor.WQEBB_SIZE, run * WqeDescriptor.WQEBB_SIZE, mirror);
        if (run < count) {
            deviceRingMemory.copyToHost(0, (count - run) * WqeDescriptor.WQEBB_SIZE, mirror);
        }
    }

    /** GPU rings: the CQ doorbell record (the poller's consumer index) into the mirror. */
    void pullCqDoorbellRecord() {
        if (deviceRingMemory != null) {
            deviceRingMemory.copyToHost(cqDbrecOffset, CqDoorbellRecordDescriptor.SIZE, mirror);
        }
    }

    QpSpec spec() {
        return spec;
    }

    @Override
    public int qpn() {
        return qpn;
    }

    @Override
    public String label() {
        return spec.label();
    }

    @Override
    public Nic nic() {
        return nic;
    }

    EmulatedNic emulatedNic() {
        return nic;
    }

    @Override
    public QpAddress address() {
        return new QpAddress(nic.deviceName(), qpn, 0, null, qpn);
    }

    /** Where the fetch staging area starts in ring memory of a QP made from {@code spec} (CPU tests allow writes). */
    static long fetchStagingOffset(QpSpec spec) {
        return (long) spec.sqWqebbs() * WqeDescriptor.WQEBB_SIZE + (long) spec.cqEntries() * CqeDescriptor.CQE_SIZE
                + 3L * LINE;
    }

    /** RESET, INIT, RTR, RTS, connected to {@code peerAddress} (this QP's own address: a loopback QP). */
    @Override
    public void connect(QpAddress peerAddress) {
        requireOpen();
        if (state.get() != QpState.RESET) {
            throw new IllegalStateException(this + " is " + state + ": only a QP in RESET can be connected");
        }
        modify(QpState.INIT);
        toRtr(peerAddress);
        modify(QpState.RTS);
    }

    /** INIT to RTR: the QP learns its peer (ibv_modify_qp with the remote QPN, LID/GID and PSN). */
    void toRtr(QpAddress peerAddress) {
        synchronized (setup) {
            requireOpen();
            EmulatedQp remote = nic.findQp(peerAddress);
            if (state.get() != QpState.INIT) {
                throw new IllegalStateException(this + " is " + state.get() + ": only a QP in INIT moves to RTR");
            }
            String degraded = remote == this ? null : nic.platform().connect(spec, remote.spec);
            if (degraded != null) {
                nic.recordFault(this + ": connected to " + remote + " over a degraded path: " + degraded);
            }
            this.peer = remote;
            move(QpState.INIT, QpState.RTR);
        }
    }

    /** Moves from {@code from} to {@code to} unless the engine moved the QP to ERROR meanwhile. */
    private void move(QpState from, QpState to) {
        if (!state.compareAndSet(from, to)) {
            throw new IllegalStateException(this + " went to " + state.get() + " while moving from " + from + " to "
                    + to);
        }
    }

    /**
     * A state change verbs allows without new connection data ({@link QpState#canMoveTo}): RESET to INIT, RTR to
     * RTS, RTS to SQD and back, anything to ERROR or RESET; INIT to RTR needs {@link #toRtr}. Moving to RESET forgets
     * the peer and the send queue: the doorbell record and the doorbell page go to zero (the poster starts again from
     * producer index 0, as after rdma-core's reset), and the engine clears its counters before it looks at the QP
     * again; CQEs already written stay in the CQ. Throws {@link IllegalStateException} for a move verbs refuses.
     */
    void modify(QpState to) {
        synchronized (setup) {
            requireOpen();
            QpState from = state.get();
            if (!from.canMoveTo(to) || to == QpState.RTR) {
                throw new IllegalStateException(this + ": cannot move from " + from + " to " + to
                        + (to == QpState.RTR ? " without a peer address (toRtr)" : ""));
            }
            if (to != QpState.RESET) {
                move(from, to);
                return;
            }
            state.set(QpState.RESET);
            peer = null;
            responder = null;
            DoorbellRecordDescriptor.putSendCounterRelease(dbrec, 0, 0);
            DoorbellDescriptor.putDoorbellRelease(doorbell, 0, 0, 0);
            resetPending = true;
            nic.awaitEnginePasses(2); // the engine has applied the reset before a poster can ring again
        }
    }

    /**
     * Connects this QP to a responder in another process: WQEs are checked against its regions and executed on
     * its memory through the CUDA IPC mapping ({@link RemoteResponder}).
     */
    void connectToProcess(RemoteResponder remote) {
        requireOpen();
        if (state.get() != QpState.RESET) {
            throw new IllegalStateException(this + " is " + state.get() + ": only a QP in RESET can be connected");
        }
        synchronized (setup) {
            modify(QpState.INIT);
            this.responder = remote;
            move(QpState.INIT, QpState.RTR);
            modify(QpState.RTS);
        }
    }

    RemoteResponder responder() {
        return responder;
    }

    @Override
    public QpState state() {
        return state.get();
    }

    /** The engine's move to ERROR (a failed WQE, or a failed request this QP answered); a reset wins over it. */
    void toError() {
        QpState s;
        while ((s = state.get()) != QpState.RESET && s != QpState.ERROR) {
            if (state.compareAndSet(s, QpState.ERROR)) {
                return;
            }
        }
    }

    EmulatedQp peer() {
        return peer;
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public QpRings deviceRings() {
        if (deviceRingMemory != null) {
            long base = deviceRingMemory.deviceAddress();
            return new QpRings(qpn, base, sqWqebbs, base + dbrecOffset, rings.deviceAddress() + doorbellOffset,
                    DoorbellKind.MEMORY, base + cqOffset, cqeCount, base + cqDbrecOffset, maxInlineBytes);
        }
        return rings(rings.deviceAddress());
    }

    @Override
    public QpRings hostRings() {
        if (deviceRingMemory != null) {
            throw new IllegalStateException(this + " keeps its rings in GPU memory: only the GPU posts on it"
                    + " (deviceRings())");
        }
        return rings(rings.hostAddress());
    }

    private QpRings rings(long base) {
        return new QpRings(qpn, base, sqWqebbs, base + dbrecOffset, base + doorbellOffset, DoorbellKind.MEMORY,
                base + cqOffset, cqeCount, base + cqDbrecOffset, maxInlineBytes);
    }

    /** Marks the QP closed; the NIC removes it from the engine, drains and frees it. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        nic.release(this);
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    @Override
    public String toString() {
        return String.format("emulated QP 0x%06x (%s)", qpn, spec.label());
    }
}

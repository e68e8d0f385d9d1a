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

import java.nio.ByteBuffer;

/**
 * An emulated RC QP: its rings in one {@link RingMemory}, laid out
 * {@code [SQ | CQ | doorbell record (64 B line) | doorbell (64 B line) | CQ doorbell record (64 B line)]}, and an
 * executor. The engine thread owns {@link #consumed} and {@link #cqProducer}; state and peer are volatile because
 * set-up threads change them.
 */
final class EmulatedQp implements NicQp {
    static final int LINE = 64;

    private final EmulatedNic nic;
    private final QpSpec spec;
    private final int qpn;
    final RingMemory rings;
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
    final int maxInlineBytes;

    private volatile QpState state = QpState.RESET;
    private volatile EmulatedQp peer;
    /** The responder in another process this QP is connected to, or null ({@link #connectToProcess}). */
    private volatile RemoteResponder responder;
    private volatile boolean closed;
    /** Set by the engine when the QP can make no more progress at all (CQ overrun, platform failure). */
    volatile boolean dead;

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

    // Engine thread only, strict mode: an RDMA READ whose data has not "landed" yet (-1 length: none). Later WQEs
    // without the fence bit run before it lands; their CQEs wait behind its own, which keeps completions in order.
    long parkedDst;
    long parkedSrc;
    long parkedLength = -1;
    long parkedSinceNanos;
    /** CQEs held back while a READ is parked: WQE counter, opcode and byte count, in posting order. */
    final long[] deferredAt;
    final int[] deferredOpcode;
    final int[] deferredBytes;
    int deferred;

    // Engine thread only, writesPassCqe mode: READ data whose CQE is written but which has not landed yet (copies
    // not issued), in posting order, since heldSinceNanos.
    final long[] heldDst;
    final long[] heldSrc;
    final long[] heldLength;
    int held;
    long heldSinceNanos;

    EmulatedQp(EmulatedNic nic, QpSpec spec, int qpn, EmulatedPlatform platform) {
        this.nic = nic;
        this.spec = spec;
        this.qpn = qpn;
        this.sqWqebbs = spec.sqWqebbs();
        this.cqeCount = spec.cqEntries();
        this.maxInlineBytes = Math.min(spec.maxInlineBytes(), WqeDescriptor.MAX_INLINE_BYTES);
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
        long total = cqDbrecOffset + LINE;
        if (total > Integer.MAX_VALUE) {
            throw new NicException(spec.label() + ": rings of " + total + " bytes are too large for the emulated NIC");
        }
        this.rings = platform.allocateRings(spec, total);
        QpExecutor ex = null;
        try {
            if ((rings.hostAddress() & (LINE - 1)) != 0 || (rings.deviceAddress() & (LINE - 1)) != 0) {
                throw new NicException("ring memory for " + spec.label() + " is not 64-byte aligned");
            }
            ByteBuffer all = rings.buffer();
            this.sq = all.slice(0, (int) sqBytes);
            this.cq = all.slice((int) cqOffset, (int) cqBytes);
            this.dbrec = all.slice((int) dbrecOffset, DoorbellRecordDescriptor.SIZE);
            this.doorbell = all.slice((int) doorbellOffset, DoorbellDescriptor.SIZE);
            this.cqDbrec = all.slice((int) cqDbrecOffset, CqDoorbellRecordDescriptor.SIZE);
            CqeEncoder.initialize(cq);
            ex = platform.createExecutor(spec, rings);
        } catch (RuntimeException e) {
            rings.close();
            throw e;
        }
        this.executor = ex;
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

    @Override
    public QpAddress address() {
        return new QpAddress(nic.deviceName(), qpn, 0, null, qpn);
    }

    @Override
    public void connect(QpAddress peerAddress) {
        requireOpen();
        if (state != QpState.RESET) {
            throw new IllegalStateException(this + " is " + state + ": only a QP in RESET can be connected");
        }
        EmulatedQp remote = nic.findQp(peerAddress);
        String degraded = remote == this ? null : nic.platform().connect(spec, remote.spec);
        if (degraded != null) {
            nic.recordFault(this + ": connected to " + remote + " over a degraded path: " + degraded);
        }
        this.peer = remote;
        this.state = QpState.RTS;
    }

    /**
     * Connects this QP to a responder in another process: WQEs are checked against its regions and executed on
     * its memory through the CUDA IPC mapping ({@link RemoteResponder}).
     */
    void connectToProcess(RemoteResponder remote) {
        requireOpen();
        if (state != QpState.RESET) {
            throw new IllegalStateException(this + " is " + state + ": only a QP in RESET can be connected");
        }
        this.responder = remote;
        this.state = QpState.RTS;
    }

    RemoteResponder responder() {
        return responder;
    }

    @Override
    public QpState state() {
        return state;
    }

    void toError() {
        state = QpState.ERROR;
    }

    EmulatedQp peer() {
        return peer;
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public QpRings deviceRings() {
        return rings(rings.deviceAddress());
    }

    @Override
    public QpRings hostRings() {
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

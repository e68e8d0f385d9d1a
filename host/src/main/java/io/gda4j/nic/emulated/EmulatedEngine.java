package io.gda4j.nic.emulated;

import io.gda4j.mlx5.CqDoorbellRecordDescriptor;
import io.gda4j.mlx5.CqeDescriptor;
import io.gda4j.mlx5.CqeEncoder;
import io.gda4j.mlx5.CqeOpcode;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.mlx5.WqeDecoder;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.mlx5.WqeFault;
import io.gda4j.mlx5.WqeFields;
import io.gda4j.nic.QpState;

/**
 * The emulated NIC's engine: an agent whose {@link #doWork()} polls every QP's doorbell (the 8-byte word of the QP's
 * doorbell page, a stand-in for the UAR register) and executes the WQEs it newly covers, in order, through the QP's {@link QpExecutor}. One thread runs it ({@link EmulatedNic} starts it);
 * tests may call {@link #doWork()} themselves instead.
 *
 * <p>Per WQE: decode with {@link WqeDecoder#decodeInto} (no allocation), check the keys, ranges and access rights
 * against the {@link RegistrationTable}, queue the data movement, and for a signaled WQE write the CQE body and
 * queue its tail store behind the data. The first failing WQE gets an error CQE (signaled or not) with the syndrome a
 * real mlx5 NIC reports for that mistake, the QP goes to the error state, and every later WQE gets a WR_FLUSH CQE
 * without running. Nothing is ever read or written outside a registered region or the QP's own rings.
 *
 * <p>Strict mode ({@link EmulatedNicConfig#strict()}, the default): an RDMA READ's data does not land when the READ
 * executes but is parked until a later WQE carries the fence bit ({@code FM_CE_SE_FENCE}), another READ comes, or
 * the QP has been idle for {@link #READ_LATENCY_NANOS}: WQEs without the fence bit run first, as on a ConnectX, where
 * a later WQE may go out before an earlier READ's response has arrived. So a WRITE from a buffer an earlier READ
 * fills sends stale bytes unless it carries the fence bit. CQEs stay in posting order (those of WQEs that overtook
 * the READ wait behind its own).
 *
 * <p>Writes may pass CQEs ({@link EmulatedNicConfig#writesPassCqe()}, a mode the flush tests use): an RDMA READ's
 * data is held after its CQE is written, and lands when the NIC next executes an atomic or a WQE that reads local
 * memory (the PCIe flush: a non-posted operation that earlier posted writes cannot be passed by), or after
 * {@link #POSTED_WRITE_HOLD_NANOS} of idleness. The source is read when the data lands.
 *
 * <p>Strict atomics ({@link EmulatedNicConfig#strictAtomics()}, the default): an ATOMIC_FA / ATOMIC_CS is a read,
 * a pause and a write of the target word ({@link QpExecutor#atomic}), as a NIC's atomic on GPU memory is: atomic
 * with this NIC's other atomics, not with GPU atomics on the same word, so code that mixes the two on one word loses
 * updates here as it would on hardware (the device API keeps them apart: {@code io.gda4j.world.AtomicRouting}).
 *
 * <p>Doorbell: like a ConnectX, the engine acts on the doorbell write, not on the doorbell record: a record stored
 * without a doorbell runs nothing. Each new doorbell word is checked ({@code acceptDoorbell}): its encoding and QP
 * number, that its producer index neither goes backwards nor runs past the send queue, and that the doorbell record
 * covers it (a doorbell rung before the record was stored). A bad doorbell is an error CQE on the QP's next WQE
 * ({@link EmulatedFault#DOORBELL_MALFORMED} and its neighbours), and the QP stops. A doorbell rung before its WQE
 * was written finds a stale slot, which the decoder rejects (WQE index or QP number mismatch, malformed).
 *
 * <p>Ordering: the doorbell is read with an acquire load, pairing with the poster's release store
 * ({@link DoorbellDescriptor#putDoorbellRelease}) or the GPU's {@code fence.sc.sys} before its
 * {@code st.mmio.relaxed.sys}; the poster stored the doorbell record and the WQE bytes before, so they are visible. The CQ doorbell record's consumer index is read with an acquire load, pairing with the
 * poster's release store, before a CQE slot is rewritten: a CQ that would overrun kills the QP, as on hardware.
 */
public final class EmulatedEngine {
    /** WQEs executed per QP per pass before moving to the next QP, so one busy QP cannot starve the others. */
    static final int BATCH = 64;
    /** Strict mode: how long a parked READ waits on an idle QP before its data lands anyway (a wire round trip). */
    static final long READ_LATENCY_NANOS = 50_000;
    /** writesPassCqe mode: how long held READ data waits on an idle QP before it lands without a flush. */
    static final long POSTED_WRITE_HOLD_NANOS = 1_000_000;

    private final EmulatedNic nic;
    private final RegistrationTable table;
    private final WqeFields wqe = new WqeFields();
    private final boolean strict;
    private final boolean writesPassCqe;
    private final long atomicSplitNanos;
    /** writesPassCqe mode: READs whose data is held on some QP (0: nothing to land). */
    private int heldTotal;
    private EmulatedFault fault;
    private String faultDetail;

    private volatile long passes;
    private volatile long wqes;
    private volatile long bytes;
    private volatile long errors;
    private volatile long flushed;
    private volatile long busyNanos;

    EmulatedEngine(EmulatedNic nic, RegistrationTable table) {
        this.nic = nic;
        this.table = table;
        this.strict = nic.config().strict();
        this.writesPassCqe = nic.config().writesPassCqe();
        this.atomicSplitNanos = nic.config().atomicSplitNanos();
    }

    /** One pass over every QP; returns the WQEs executed. Called by one thread at a time. */
    public int doWork() {
        EmulatedQp[] qps = nic.qpSnapshot();
        int work = 0;
        for (EmulatedQp qp : qps) {
            work += service(qp);
        }
        passes = passes + 1;
        return work;
    }

    /** Passes completed so far (the NIC waits for two more before freeing a QP the engine may still hold). */
    long passes() {
        return passes;
    }

    /** Counters since the NIC was opened. */
    public EngineStats stats() {
        return new EngineStats(wqes, bytes, errors, flushed, busyNanos, passes);
    }

    private int service(EmulatedQp qp) {
        if (qp.dead || qp.isClosed() || qp.state() == QpState.RESET) {
            return 0;
        }
        long bell = DoorbellDescriptor.getDoorbellAcquire(qp.doorbell, 0);
        if (bell != qp.doorbellSeen) {
            qp.doorbellSeen = bell;
            if (!acceptDoorbell(qp, bell)) {
                return 1;
            }
        }
        long at = qp.consumed;
        long target = qp.rungTo;
        if (at == target) {
            if (qp.parkedLength >= 0 && System.nanoTime() - qp.parkedSinceNanos >= READ_LATENCY_NANOS) {
                land(qp);
                return 1;
            }
            if (qp.held > 0 && System.nanoTime() - qp.heldSinceNanos >= POSTED_WRITE_HOLD_NANOS) {
                heldTotal -= qp.held;
                landHeld(qp);
                return 1;
            }
            return 0;
        }
        long start = System.nanoTime();
        int done = 0;
        long moved = 0;
        while (at < target && done < BATCH && !qp.dead) {
            int size;
            if (qp.state() == QpState.ERROR) {
                size = flushOne(qp, at, target);
            } else {
                size = executeOne(qp, at, target);
                moved += lastBytes;
            }
            at += size;
            done++;
        }
        qp.consumed = at;
        qp.wqes = qp.wqes + done;
        wqes = wqes + done;
        bytes = bytes + moved;
        busyNanos = busyNanos + (System.nanoTime() - start);
        return done;
    }

    /**
     * A new doorbell word. It must be {@code {BE32(pi << 8), BE32(qpn << 8)}} for this QP; its producer index must
     * not go behind the last doorbell nor more than the send queue ahead of the executed WQEs; and the doorbell
     * record, read after the doorbell (so at least what the poster stored before ringing), must cover it. Otherwise
     * the QP fails with an error CQE on its next WQE and stops: which WQEs a bad doorbell meant is unknown.
     */
    private boolean acceptDoorbell(EmulatedQp qp, long bell) {
        int pi = DoorbellDescriptor.producerIndex(bell);
        long expected = DoorbellDescriptor.doorbellBigEndian(pi, qp.qpn());
        if (bell != expected) {
            return badDoorbell(qp, EmulatedFault.DOORBELL_MALFORMED, String.format("the doorbell reads 0x%016x (QP"
                    + " 0x%06x, producer index %d); this QP's doorbell for that index is 0x%016x", bell,
                    DoorbellDescriptor.qpn(bell), pi, expected));
        }
        long rung = qp.rungTo + ((pi - qp.rungTo) & DoorbellRecordDescriptor.COUNTER_MASK);
        if (rung - qp.consumed > qp.sqWqebbs) {
            return badDoorbell(qp, EmulatedFault.DOORBELL_OUT_OF_RANGE, String.format("producer index %d (mod 2^16)"
                    + " after doorbells up to %d and %d WQEBBs executed; the send queue holds %d", pi, qp.rungTo,
                    qp.consumed, qp.sqWqebbs));
        }
        int recorded = DoorbellRecordDescriptor.getSendCounterAcquire(qp.dbrec, 0);
        if (((recorded - rung) & DoorbellRecordDescriptor.COUNTER_MASK) > qp.sqWqebbs) {
            return badDoorbell(qp, EmulatedFault.DOORBELL_AHEAD_OF_RECORD, String.format("the doorbell names producer"
                    + " index %d, the doorbell record's send counter is %d: store the record, then ring", pi,
                    recorded));
        }
        qp.rungTo = rung;
        return true;
    }

    private boolean badDoorbell(EmulatedQp qp, EmulatedFault why, String detail) {
        WqeDecoder.decodeInto(qp.sq, qp.consumed, WqeDecoder.ANY_QPN, wqe);
        fail(qp, qp.consumed, wqe.opcode(), why.syndrome(), why, detail);
        qp.dead = true;
        return false;
    }

    private long lastBytes;

    /** Executes the WQE at {@code at}; returns the WQEBBs it occupies (at least 1, at most up to target). */
    private int executeOne(EmulatedQp qp, long at, long target) {
        lastBytes = 0;
        WqeFault decoded = WqeDecoder.decodeInto(qp.sq, at, qp.qpn(), wqe);
        int size = wqe.wqebbs();
        if (at + size > target) {
            size = (int) (target - at);
            if (decoded == WqeFault.NONE) {
                fail(qp, at, wqe.opcode(), EmulatedFault.PARTIAL_WQE.syndrome(), EmulatedFault.PARTIAL_WQE,
                        "the doorbell covers " + size + " of its " + wqe.wqebbs() + " WQEBBs");
                return size;
            }
        }
        if (decoded != WqeFault.NONE) {
            fail(qp, at, wqe.opcode(), decoded.syndrome(), EmulatedFault.MALFORMED_WQE, decoded.description());
            return size;
        }
        fault = null;
        if (qp.parkedLength >= 0 && (wqe.fmCeSe() & WqeDescriptor.FM_CE_SE_FENCE) != 0) {
            land(qp); // the fence bit: this WQE waits for the earlier READ's data
        }
        if (heldTotal > 0 && readsLocalMemoryOrIsAtomic()) {
            landAllHeld(qp); // the PCIe flush: a DMA read or an atomic does not pass earlier posted writes
        }
        try {
            switch (wqe.opcode()) {
                case Mlx5Opcode.NOP:
                    break;
                case Mlx5Opcode.RDMA_WRITE:
                    write(qp);
                    break;
                case Mlx5Opcode.RDMA_WRITE_IMM:
                    fault(EmulatedFault.NO_RECEIVE_QUEUE, "");
                    break;
                case Mlx5Opcode.RDMA_READ:
                    read(qp);
                    break;
                default: // ATOMIC_FA, ATOMIC_CS: the decoder accepts no other opcode
                    atomic(qp);
                    break;
            }
        } catch (RuntimeException e) {
            fault(EmulatedFault.EXECUTOR_FAILED, e.toString());
        }
        if (fault != null) {
            fail(qp, at, wqe.opcode(), fault.syndrome(), fault, faultDetail);
            return size;
        }
        if (wqe.signaled()) {
            int byteCount = wqe.opcode() == Mlx5Opcode.NOP ? 0 : (int) lastBytes;
            if (qp.parkedLength >= 0) { // behind the parked READ's CQE (or its own, if it is the parked READ)
                qp.deferredAt[qp.deferred] = at;
                qp.deferredOpcode[qp.deferred] = wqe.opcode();
                qp.deferredBytes[qp.deferred] = byteCount;
                qp.deferred++;
            } else if (reserveCqe(qp)) {
                long tail = CqeEncoder.prepareRequester(qp.cq, qp.cqProducer, qp.qpn(), (int) at, wqe.opcode(),
                        byteCount);
                publish(qp, tail);
            }
        }
        return size;
    }

    private void write(EmulatedQp qp) {
        if (!peerReachable(qp)) {
            return;
        }
        if (wqe.isInline()) {
            long length = wqe.byteCount();
            if (length > qp.maxInlineBytes) {
                fault(EmulatedFault.MALFORMED_WQE, "inline payload of " + length + " bytes exceeds the QP's limit of "
                        + qp.maxInlineBytes);
                faultSyndrome = CqeSyndrome.LOCAL_LENGTH;
                return;
            }
            Registration target = remote(qp, wqe.rkey(), wqe.raddr(), length, Access.WRITE);
            if (target == null || length == 0) {
                return;
            }
            long raddr = wqe.raddr() + target.translation;
            if ((length == 8 || length == 16) && (raddr & 7) == 0) {
                // One 8-byte store per half, so a 16-byte {data, seq} slot is never torn inside a half.
                qp.executor.store64(raddr, wqe.inlineLongLittleEndian(qp.sq, 0));
                if (length == 16) {
                    qp.executor.store64(raddr + 8, wqe.inlineLongLittleEndian(qp.sq, 8));
                }
            } else {
                long ring = qp.rings.deviceAddress();
                int copied = 0;
                while (copied < length) {
                    int run = wqe.inlineRunLength(copied);
                    qp.executor.copy(raddr + copied, ring + wqe.inlinePayloadOffset(copied), run);
                    copied += run;
                }
            }
            lastBytes = length;
            return;
        }
        long length = dataLength();
        Registration remote = remote(qp, wqe.rkey(), wqe.raddr(), length, Access.WRITE);
        if (remote == null) {
            return;
        }
        Registration local = local(wqe.lkey(), wqe.addr(), length, false);
        if (local == null) {
            return;
        }
        if (local.isNull()) {
            qp.executor.zero(wqe.raddr() + remote.translation, length); // a null region reads as zeros
        } else {
            qp.executor.copy(wqe.raddr() + remote.translation, wqe.addr(), length);
        }
        lastBytes = length;
    }

    private void read(EmulatedQp qp) {
        if (!peerReachable(qp)) {
            return;
        }
        long length = dataLength();
        Registration source = remote(qp, wqe.rkey(), wqe.raddr(), length, Access.READ);
        if (source == null) {
            return;
        }
        long raddr = wqe.raddr() + source.translation;
        Registration local = local(wqe.lkey(), wqe.addr(), length, true);
        if (local == null) {
            return;
        }
        if (!local.isNull()) { // a null region drops what is written to it
            if (strict) {
                if (qp.parkedLength >= 0) {
                    land(qp); // READs land in order
                }
                qp.parkedDst = wqe.addr();
                qp.parkedSrc = raddr;
                qp.parkedLength = length;
                qp.parkedSinceNanos = System.nanoTime();
            } else if (writesPassCqe) {
                hold(qp, wqe.addr(), raddr, length);
            } else {
                qp.executor.copy(wqe.addr(), raddr, length);
            }
        }
        lastBytes = length;
    }

    /** A WQE whose execution reads this NIC's local memory (a WRITE's source) or is an atomic. */
    private boolean readsLocalMemoryOrIsAtomic() {
        int op = wqe.opcode();
        return op == Mlx5Opcode.ATOMIC_FA || op == Mlx5Opcode.ATOMIC_CS
                || ((op == Mlx5Opcode.RDMA_WRITE || op == Mlx5Opcode.RDMA_WRITE_IMM) && !wqe.isInline());
    }

    /** writesPassCqe mode: READ data lands later than its CQE (whose store the caller queues as usual). */
    private void hold(EmulatedQp qp, long dst, long src, long length) {
        if (qp.held == qp.heldDst.length) {
            heldTotal -= qp.held;
            landHeld(qp);
        }
        if (qp.held == 0) {
            qp.heldSinceNanos = System.nanoTime();
        }
        qp.heldDst[qp.held] = dst;
        qp.heldSrc[qp.held] = src;
        qp.heldLength[qp.held] = length;
        qp.held++;
        heldTotal++;
    }

    /** Issues {@code qp}'s held copies on its own executor, in posting order. */
    private void landHeld(EmulatedQp qp) {
        int n = qp.held;
        qp.held = 0;
        try {
            for (int i = 0; i < n; i++) {
                qp.executor.copy(qp.heldDst[i], qp.heldSrc[i], qp.heldLength[i]);
            }
        } catch (RuntimeException e) {
            qp.dead = true;
            qp.toError();
            nic.recordFault(qp + ": held READ data could not land: " + e);
        }
    }

    /**
     * Every QP's held data lands before {@code current}'s next work: other QPs' copies run on their own executors,
     * so those are drained (the engine waits) before {@code current} goes on.
     */
    private void landAllHeld(EmulatedQp current) {
        for (EmulatedQp qp : nic.qpSnapshot()) {
            if (qp.held > 0) {
                landHeld(qp);
                if (qp != current && !qp.dead) {
                    try {
                        qp.executor.drain();
                    } catch (RuntimeException e) {
                        qp.dead = true;
                        qp.toError();
                        nic.recordFault(qp + ": held READ data could not land: " + e);
                    }
                }
            }
        }
        heldTotal = 0;
    }

    /** The parked READ's data lands, then the CQEs held behind it are written in posting order. */
    private void land(EmulatedQp qp) {
        long length = qp.parkedLength;
        qp.parkedLength = -1;
        try {
            if (writesPassCqe) {
                hold(qp, qp.parkedDst, qp.parkedSrc, length); // its CQE (below) is written before the data lands
            } else {
                qp.executor.copy(qp.parkedDst, qp.parkedSrc, length);
            }
        } catch (RuntimeException e) {
            qp.deferred = 0;
            qp.dead = true;
            qp.toError();
            nic.recordFault(qp + ": a parked READ's copy failed: " + e);
            return;
        }
        int n = qp.deferred;
        qp.deferred = 0;
        for (int i = 0; i < n; i++) {
            if (reserveCqe(qp)) {
                long tail = CqeEncoder.prepareRequester(qp.cq, qp.cqProducer, qp.qpn(), (int) qp.deferredAt[i],
                        qp.deferredOpcode[i], qp.deferredBytes[i]);
                publish(qp, tail);
            }
        }
    }

    private void atomic(EmulatedQp qp) {
        if (!peerReachable(qp)) {
            return;
        }
        if ((wqe.raddr() & 7) != 0) {
            fault(EmulatedFault.MISALIGNED_ATOMIC, String.format("raddr 0x%x", wqe.raddr()));
            return;
        }
        Registration target = remote(qp, wqe.rkey(), wqe.raddr(), 8, Access.ATOMIC);
        if (target == null) {
            return;
        }
        Registration local = local(wqe.lkey(), wqe.addr(), 8, true);
        if (local == null) {
            return;
        }
        qp.executor.atomic(wqe.opcode(), wqe.raddr() + target.translation, wqe.swapAdd(), wqe.compare(),
                local.isNull() ? 0 : wqe.addr(), atomicSplitNanos, atomicSplitNanos > 0 ? target.atomicLock : 0);
        lastBytes = 8;
    }

    /** A data segment's byte_count; 0 means 2^31 bytes on mlx5, and the emulated NIC reads it the same way. */
    private long dataLength() {
        int count = wqe.byteCount();
        return count == 0 ? 1L << 31 : Integer.toUnsignedLong(count);
    }

    private enum Access { WRITE, READ, ATOMIC }

    /**
     * The region {@code rkey} names at the responder, checked for the range and the right: this NIC's table, or the
     * table of the responder in another process that {@code qp} is connected to.
     */
    private Registration remote(EmulatedQp qp, int rkey, long raddr, long length, Access access) {
        RemoteResponder across = qp.responder();
        Registration r = (across == null ? table : across.table()).find(rkey);
        if (r == null || r.isNull()) {
            fault(EmulatedFault.UNKNOWN_RKEY, String.format("rkey 0x%08x", rkey));
            return null;
        }
        if (!r.contains(raddr, length)) {
            fault(EmulatedFault.REMOTE_OUT_OF_RANGE, String.format("[0x%x, +%d) is outside %s", raddr, length, r));
            return null;
        }
        boolean allowed = access == Access.WRITE ? r.remoteWrite : access == Access.READ ? r.remoteRead
                : r.remoteAtomic;
        if (!allowed) {
            fault(EmulatedFault.REMOTE_NO_ACCESS, "remote " + access + " on " + r);
            return null;
        }
        return r;
    }

    private Registration local(int lkey, long addr, long length, boolean needWrite) {
        Registration r = table.find(lkey);
        if (r == null) {
            fault(EmulatedFault.UNKNOWN_LKEY, String.format("lkey 0x%08x", lkey));
            return null;
        }
        if (!r.contains(addr, length)) {
            fault(EmulatedFault.LOCAL_OUT_OF_RANGE, String.format("[0x%x, +%d) is outside %s", addr, length, r));
            return null;
        }
        if (needWrite && !r.isNull() && !r.localWrite) {
            fault(EmulatedFault.LOCAL_NO_WRITE, r.toString());
            return null;
        }
        return r;
    }

    private boolean peerReachable(EmulatedQp qp) {
        RemoteResponder across = qp.responder();
        if (across != null) {
            if (across.isClosed()) {
                fault(EmulatedFault.PEER_UNREACHABLE, across + ": the link to that process is closed");
                return false;
            }
            return true;
        }
        EmulatedQp peer = qp.peer();
        if (peer == null || peer.isClosed() || peer.state() != QpState.RTS) {
            fault(EmulatedFault.PEER_UNREACHABLE, peer == null ? "not connected" : peer + " is "
                    + (peer.isClosed() ? "closed" : peer.state()));
            return false;
        }
        return true;
    }

    private CqeSyndrome faultSyndrome;

    private void fault(EmulatedFault f, String detail) {
        fault = f;
        faultDetail = detail;
        faultSyndrome = null;
    }

    /** The first error on a QP: an error CQE whether or not the WQE asked for one, then the error state. */
    private void fail(EmulatedQp qp, long at, int opcode, CqeSyndrome syndrome, EmulatedFault why, String detail) {
        CqeSyndrome s = faultSyndrome != null ? faultSyndrome : syndrome;
        faultSyndrome = null;
        if (qp.parkedLength >= 0) {
            land(qp); // the CQEs before this error come first
        }
        qp.toError();
        errors = errors + 1;
        nic.recordFault(String.format("%s: WQE %d (%s) failed with %s: %s%s", qp, at & WqeDescriptor.WQE_INDEX_MASK,
                Mlx5Opcode.name(opcode), CqeSyndrome.describe(s.code()), why.description(),
                detail == null || detail.isEmpty() ? "" : " (" + detail + ")"));
        if (reserveCqe(qp)) {
            long tail = CqeEncoder.prepareError(qp.cq, qp.cqProducer, CqeOpcode.REQ_ERR, qp.qpn(), (int) at, opcode,
                    s.code(), why.vendorSyndrome());
            publish(qp, tail);
        }
    }

    /** A WQE after the error: a WR_FLUSH CQE, nothing executed. Its size comes from its ds, clamped to the ring. */
    private int flushOne(EmulatedQp qp, long at, long target) {
        WqeDecoder.decodeInto(qp.sq, at, WqeDecoder.ANY_QPN, wqe);
        int size = (int) Math.min(Math.min(wqe.wqebbs(), WqeDescriptor.MAX_WQEBBS), target - at);
        flushed = flushed + 1;
        if (reserveCqe(qp)) {
            long tail = CqeEncoder.prepareError(qp.cq, qp.cqProducer, CqeOpcode.REQ_ERR, qp.qpn(), (int) at,
                    wqe.opcode(), CqeSyndrome.WR_FLUSH.code(), EmulatedFault.FLUSHED.vendorSyndrome());
            publish(qp, tail);
        }
        return Math.max(size, 1);
    }

    /**
     * Whether the CQ has room for one more CQE: the consumer index published in the CQ doorbell record (acquire,
     * pairing with the poller's release store) must be within a ring of the producer. Otherwise the CQ overruns,
     * which on hardware is a fatal CQ error: the QP dies without further CQEs, and the poster times out.
     */
    private boolean reserveCqe(EmulatedQp qp) {
        int consumer = CqDoorbellRecordDescriptor.getConsumerIndexAcquire(qp.cqDbrec, 0);
        int outstanding = (int) ((qp.cqProducer - consumer) & CqDoorbellRecordDescriptor.CONSUMER_INDEX_MASK);
        if (outstanding >= qp.cqeCount) {
            qp.dead = true;
            qp.toError();
            errors = errors + 1;
            nic.recordFault(String.format("%s: CQ overrun: %d CQEs written, the CQ doorbell record says %d consumed,"
                    + " the CQ holds %d; the QP is dead (a real NIC raises a CQ error event)", qp, qp.cqProducer,
                    consumer, qp.cqeCount));
            return false;
        }
        return true;
    }

    /** Queues the tail store behind the WQE's work; the body was written by the prepare call just before. */
    private void publish(EmulatedQp qp, long tail) {
        long offset = qp.cqOffset + CqeDescriptor.cqeOffset(qp.cqProducer, qp.cqeCount) + CqeDescriptor.TAIL_OFFSET;
        qp.cqProducer++;
        try {
            qp.executor.publishCqe(offset, tail);
        } catch (RuntimeException e) {
            qp.dead = true;
            qp.toError();
            nic.recordFault(qp + ": could not queue a CQE: " + e);
        }
    }
}

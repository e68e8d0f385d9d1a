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
import io.gda4j.nic.NicAccess;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import io.gda4j.nic.QpSpec;
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
 * <p>Strict mode ({@link EmulatedNicConfig#strict()}, the default), no more than a ConnectX promises:
 * <ul>
 * <li>Responses come late. An RDMA READ's data and a fetching atomic's old value do not land when the WQE executes
 * but are parked (up to the QP's {@code max_rd_atomic}; one more waits for the oldest) until a later WQE carries the
 * fence bit ({@code FM_CE_SE_FENCE}) or the QP has been idle for {@link #READ_LATENCY_NANOS}: WQEs without the fence
 * bit run first, as on a ConnectX, where a later WQE may go out before an earlier response has arrived. So a WRITE
 * from a buffer an earlier READ or atomic fills sends stale bytes unless it carries the fence bit. CQEs stay in
 * posting order (those of WQEs that overtook a parked one wait behind its own).</li>
 * <li>The RC protocol. A peer that does not answer (closed, not in RTR/RTS/SQD, connected to another QP) is retried
 * for {@link EmulatedNicConfig#retryNanos()} before the WQE fails with TRANSPORT_RETRY_EXC; a request the responder
 * refuses (bad rkey, range or right, its QP's access flags, more READs/atomics in flight than its
 * {@code max_dest_rd_atomic}) fails at the requester and moves the responder QP to ERROR too. Keys are looked up in
 * the responder NIC's table, so a key of another NIC fails.</li>
 * <li>States. A doorbell rung in RESET, INIT or RTR is dropped; in SQD it is taken but nothing starts.</li>
 * <li>Relaxed ordering. A WRITE into a region registered with {@code RELAXED_ORDERING} is held after its CQE, and an
 * 8- or 16-byte inline WRITE into such a region (a signal) lands at once, before the data held ahead of it; a READ
 * or atomic toward the same NIC, or a WRITE into a strictly ordered region on the same QP, lands held data first.</li>
 * </ul>
 *
 * <p>Writes may pass CQEs ({@link EmulatedNicConfig#writesPassCqe()}, a mode the flush tests use): RDMA READ data and
 * WRITE payloads are held after their CQE is written, READ data until the NIC next executes an atomic or a WQE that
 * reads memory behind the same NIC (the PCIe flush: a non-posted operation that earlier posted writes cannot be passed
 * by), WRITE data until the same or a later WQE on its QP reaches the peer's memory (posted writes stay in order),
 * or either after {@link #WRITES_PASS_CQE_HOLD_NANOS} of idleness. So "quiet, then tell the peer by another path" reads
 * stale bytes, as it may on hardware. A held WRITE's payload is copied into the QP's staging area when it executes
 * (the poster may reuse its buffer after the CQE); one larger than that area is not held. READ sources are read when
 * the data lands.
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
    /** Strict mode: how long parked READ data waits on an idle QP before it lands anyway (a wire round trip). */
    static final long READ_LATENCY_NANOS = 50_000;
    /** How long held data (a CQE written before it) waits on an idle QP before it lands without a flush. */
    static final long POSTED_WRITE_HOLD_NANOS = 1_000_000;
    /**
     * The same in the writes-pass-CQE mode, which exists to show a missing flush: far longer than a NIC would hold,
     * because a kernel that reads right after it sees the CQE may itself wait milliseconds for the GPU when other
     * contexts time-slice it. With 1 ms the data had landed first in every round of a loaded GPU run, and
     * IbgdaFlushGpuTest could not tell a missing flush. Public for the tests that wait it out.
     */
    public static final long WRITES_PASS_CQE_HOLD_NANOS = 20_000_000;
    /** {@link #executeOne}: the WQE waits (its peer does not answer yet); the QP goes no further this pass. */
    private static final int STALL = -1;
    /** A held entry's length that means "an 8-byte store of the value in heldSrc" (inline 8/16-byte payloads). */
    private static final long STORE64 = -1;
    /** The doorbell page as one big-endian word, for clearing a dropped doorbell without losing a newer one. */
    private static final VarHandle DOORBELL_WORD = MethodHandles.byteBufferViewVarHandle(long[].class,
            ByteOrder.BIG_ENDIAN);

    private final EmulatedNic nic;
    private final RegistrationTable table;
    private final WqeFields wqe = new WqeFields();
    private final boolean strict;
    private final boolean writesPassCqe;
    /** How long held data waits on an idle QP: {@link #POSTED_WRITE_HOLD_NANOS}, or the writes-pass-CQE mode's. */
    private final long holdNanos;
    private final long atomicSplitNanos;
    private final long retryNanos;
    /** Held entries on this NIC's QPs (0: nothing to land). */
    private int heldTotal;
    private EmulatedFault fault;
    private String faultDetail;
    private CqeSyndrome faultSyndrome;
    private long lastBytes;

    private volatile long passes;
    private volatile long wqes;
    private volatile long bytes;
    private volatile long errors;
    private volatile long flushed;
    private volatile long busyNanos;
    private volatile long droppedDoorbells;

    EmulatedEngine(EmulatedNic nic, RegistrationTable table) {
        this.nic = nic;
        this.table = table;
        this.strict = nic.config().strict();
        this.writesPassCqe = nic.config().writesPassCqe();
        this.holdNanos = writesPassCqe ? WRITES_PASS_CQE_HOLD_NANOS : POSTED_WRITE_HOLD_NANOS;
        this.atomicSplitNanos = nic.config().atomicSplitNanos();
        this.retryNanos = nic.config().retryNanos();
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

    /** Doorbells dropped because their QP's send queue was off (RESET, INIT, RTR). */
    long droppedDoorbells() {
        return droppedDoorbells;
    }

    /** Counters since the NIC was opened. */
    public EngineStats stats() {
        return new EngineStats(wqes, bytes, errors, flushed, busyNanos, passes);
    }

    private int service(EmulatedQp qp) {
        if (qp.resetPending) {
            applyReset(qp);
        }
        if (qp.dead || qp.isClosed()) {
            return 0;
        }
        // The doorbell before the state: a doorbell rung after connect() returned carries the connected state with
        // it (acquire); read the other way round, a state read just before the connect would drop that doorbell.
        long bell = DoorbellDescriptor.getDoorbellAcquire(qp.doorbell, 0);
        QpState state = qp.state();
        boolean sendQueueOff = state == QpState.RESET || state == QpState.INIT || state == QpState.RTR;
        if (sendQueueOff && !strict) {
            return 0; // lenient: the doorbell stays unread, and runs once the QP is connected
        }
        if (bell != qp.doorbellSeen) {
            qp.doorbellSeen = bell;
            if (sendQueueOff) {
                // A ConnectX drops it; it never runs later. The register keeps no value, so the page is cleared
                // (unless rung again meanwhile): the same word rung after connecting is a new doorbell.
                if (DOORBELL_WORD.compareAndSet(qp.doorbell, 0, bell, 0L)) {
                    qp.doorbellSeen = 0;
                }
                droppedDoorbells = droppedDoorbells + 1;
                nic.recordFault(String.format("%s: doorbell 0x%016x dropped: the QP is in %s, its send queue is off",
                        qp, bell, state));
                return 1;
            }
            if (!acceptDoorbell(qp, bell)) {
                return 1;
            }
        }
        long at = qp.consumed;
        long target = qp.rungTo;
        if (at == target || sendQueueOff || state == QpState.SQD) {
            return landIdle(qp);
        }
        long start = System.nanoTime();
        int done = 0;
        long moved = 0;
        boolean stalled = false;
        while (at < target && done < BATCH && !qp.dead) {
            QpState now = qp.state();
            int size;
            if (now == QpState.ERROR) {
                size = flushOne(qp, at, target);
            } else if (now != QpState.RTS) {
                break; // moved to SQD or RESET meanwhile
            } else {
                size = executeOne(qp, at, target);
                if (size == STALL) {
                    stalled = true;
                    break;
                }
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
        if (stalled) {
            done += landIdle(qp); // responses to earlier requests still arrive while a later one is retried
        }
        return done;
    }

    /** Parked responses and held data land once the QP has been idle long enough. */
    private int landIdle(EmulatedQp qp) {
        if (qp.parked > 0 && System.nanoTime() - qp.parkedSinceNanos >= READ_LATENCY_NANOS) {
            landParked(qp, qp.parked);
            return 1;
        }
        if (qp.held > 0 && System.nanoTime() - qp.heldSinceNanos >= holdNanos) {
            landHeld(qp, null);
            return 1;
        }
        return 0;
    }

    /**
     * The engine's side of a reset ({@link EmulatedQp#modify} to RESET): data already acknowledged still lands,
     * responses not yet arrived are abandoned, and the send queue starts again at 0 (the CQ goes on).
     */
    private void applyReset(EmulatedQp qp) {
        qp.resetPending = false;
        if (qp.held > 0) {
            landHeld(qp, null);
        }
        qp.parked = 0;
        qp.parkedHead = 0;
        qp.deferred = 0;
        qp.consumed = 0;
        qp.rungTo = 0;
        qp.doorbellSeen = 0;
        qp.retryingAt = -1;
        qp.dead = false;
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
        qp.pullDoorbellRecord();
        int recorded = DoorbellRecordDescriptor.getSendCounterAcquire(qp.dbrec, 0);
        if (((recorded - rung) & DoorbellRecordDescriptor.COUNTER_MASK) > qp.sqWqebbs) {
            return badDoorbell(qp, EmulatedFault.DOORBELL_AHEAD_OF_RECORD, String.format("the doorbell names producer"
                    + " index %d, the doorbell record's send counter is %d: store the record, then ring", pi,
                    recorded));
        }
        qp.pullWqes(qp.rungTo, rung);
        qp.rungTo = rung;
        return true;
    }

    private boolean badDoorbell(EmulatedQp qp, EmulatedFault why, String detail) {
        WqeDecoder.decodeInto(qp.sq, qp.consumed, WqeDecoder.ANY_QPN, wqe);
        fail(qp, qp.consumed, wqe.opcode(), why.syndrome(), why, detail);
        qp.dead = true;
        return false;
    }

    /**
     * Executes the WQE at {@code at}; returns the WQEBBs it occupies (at least 1, at most up to target), or
     * {@link #STALL} while its peer does not answer and the retry time has not run out.
     */
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
        int op = wqe.opcode();
        if (op != Mlx5Opcode.NOP) {
            String silent = unanswered(qp);
            if (silent == null) {
                qp.retryingAt = -1;
            } else if (strict && (qp.retryingAt != at || System.nanoTime() - qp.retrySinceNanos < retryNanos)) {
                if (qp.retryingAt != at) {
                    qp.retryingAt = at;
                    qp.retrySinceNanos = System.nanoTime();
                }
                return STALL; // the NIC retransmits; later WQEs wait behind this one
            } else {
                qp.retryingAt = -1;
                fail(qp, at, op, EmulatedFault.PEER_UNREACHABLE.syndrome(), EmulatedFault.PEER_UNREACHABLE, silent
                        + (strict ? " (retried for " + retryNanos / 1_000_000 + " ms)" : ""));
                return size;
            }
        }
        if (qp.parked > 0 && (wqe.fmCeSe() & WqeDescriptor.FM_CE_SE_FENCE) != 0) {
            landParked(qp, qp.parked); // the fence bit: this WQE waits for the earlier READs' and atomics' responses
        }
        if (heldTotal > 0 && (op == Mlx5Opcode.RDMA_WRITE || op == Mlx5Opcode.RDMA_WRITE_IMM) && !wqe.isInline()) {
            landAllHeld(qp, table); // the PCIe flush: a DMA read of local memory does not pass earlier posted writes
        }
        try {
            switch (op) {
                case Mlx5Opcode.NOP:
                    break;
                case Mlx5Opcode.RDMA_WRITE:
                    write(qp);
                    break;
                case Mlx5Opcode.RDMA_WRITE_IMM:
                    fault(EmulatedFault.NO_RECEIVE_QUEUE, "");
                    break;
                case Mlx5Opcode.RDMA_READ:
                    read(qp, at);
                    break;
                default: // ATOMIC_FA, ATOMIC_CS: the decoder accepts no other opcode
                    atomic(qp, at);
                    break;
            }
        } catch (RuntimeException e) {
            fault(EmulatedFault.EXECUTOR_FAILED, e.toString());
        }
        if (fault != null) {
            fail(qp, at, op, fault.syndrome(), fault, faultDetail);
            return size;
        }
        if (wqe.signaled()) {
            int byteCount = op == Mlx5Opcode.NOP ? 0 : (int) lastBytes;
            if (qp.parked > 0) { // behind the oldest parked response's CQE (or its own, if it is parked)
                qp.deferredAt[qp.deferred] = at;
                qp.deferredOpcode[qp.deferred] = op;
                qp.deferredBytes[qp.deferred] = byteCount;
                qp.deferred++;
            } else if (reserveCqe(qp)) {
                long tail = CqeEncoder.prepareRequester(qp.cq, qp.cqProducer, qp.qpn(), (int) at, op, byteCount);
                publish(qp, tail);
            }
        }
        return size;
    }

    /**
     * Why the peer would not answer a request from {@code qp}, or null when it would: not connected, closed, not
     * ready to receive, or (strict) connected to another QP, whose packets it drops.
     */
    private String unanswered(EmulatedQp qp) {
        RemoteResponder across = qp.responder();
        if (across != null) {
            return across.isClosed() ? across + ": the link to that process is closed" : null;
        }
        EmulatedQp peer = qp.peer();
        if (peer == null) {
            return "not connected";
        }
        if (peer.isClosed()) {
            return peer + " is closed";
        }
        QpState s = peer.state();
        if (!strict) {
            return s == QpState.RTS ? null : peer + " is " + s;
        }
        if (!s.responds()) {
            return peer + " is " + s;
        }
        EmulatedQp back = peer.peer();
        if (peer != qp && back != qp) {
            return peer + " is connected to " + (back == null ? "nothing" : back) + ", not to this QP";
        }
        return null;
    }

    private void write(EmulatedQp qp) {
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
            RegistrationTable domain = remoteTable(qp);
            orderAfterHeldWrites(qp, target, domain);
            long raddr = wqe.raddr() + target.translation;
            long ring = qp.rings.deviceAddress();
            boolean halves = (length == 8 || length == 16) && (raddr & 7) == 0;
            // Relaxed ordering: a small store into a relaxed region overtakes the larger writes held before it.
            boolean overtakes = strict && target.relaxed && halves;
            if (holdsWrite(target) && !overtakes && (halves || makeStagingRoom(qp, length))) {
                if (halves) { // one 8-byte store per half, also when it lands late
                    hold(qp, raddr, wqe.inlineLongLittleEndian(qp.sq, 0), STORE64, domain, target.relaxed);
                    if (length == 16) {
                        hold(qp, raddr + 8, wqe.inlineLongLittleEndian(qp.sq, 8), STORE64, domain, target.relaxed);
                    }
                } else {
                    long staged = ring + qp.writeStagingOffset + qp.writeStagingUsed;
                    int copied = 0;
                    while (copied < length) {
                        int run = wqe.inlineRunLength(copied);
                        qp.executor.copy(staged + copied, ring + wqe.inlinePayloadOffset(copied), run);
                        copied += run;
                    }
                    qp.writeStagingUsed += (length + 7) & ~7L;
                    hold(qp, raddr, staged, length, domain, target.relaxed);
                }
            } else if (halves) {
                // One 8-byte store per half, so a 16-byte {data, seq} slot is never torn inside a half.
                qp.executor.store64(raddr, wqe.inlineLongLittleEndian(qp.sq, 0));
                if (length == 16) {
                    qp.executor.store64(raddr + 8, wqe.inlineLongLittleEndian(qp.sq, 8));
                }
            } else {
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
        RegistrationTable domain = remoteTable(qp);
        orderAfterHeldWrites(qp, remote, domain);
        long raddr = wqe.raddr() + remote.translation;
        if (holdsWrite(remote) && makeStagingRoom(qp, length)) {
            // The NIC reads the source now (the poster may reuse it after the CQE); the target sees it later.
            long staged = qp.rings.deviceAddress() + qp.writeStagingOffset + qp.writeStagingUsed;
            if (local.isNull()) {
                qp.executor.zero(staged, length);
            } else {
                qp.executor.copy(staged, wqe.addr(), length);
            }
            qp.writeStagingUsed += (length + 7) & ~7L;
            hold(qp, raddr, staged, length, domain, remote.relaxed);
        } else if (local.isNull()) {
            qp.executor.zero(raddr, length); // a null region reads as zeros
        } else {
            qp.executor.copy(raddr, wqe.addr(), length);
        }
        lastBytes = length;
    }

    /** Whether a WRITE into {@code target} lands after its CQE: writes-pass-CQE mode, or (strict) a relaxed target. */
    private boolean holdsWrite(Registration target) {
        return writesPassCqe || (strict && target.relaxed);
    }

    /**
     * A WRITE into a strictly ordered region does not pass the posted writes before it on its QP into the same
     * memory: they land first. One into a relaxed region may pass them.
     */
    private void orderAfterHeldWrites(EmulatedQp qp, Registration target, RegistrationTable domain) {
        if (qp.held > 0 && !target.relaxed) {
            landHeld(qp, domain);
        }
    }

    /** Room for {@code length} payload bytes in the QP's write staging area (landing what it holds if needed). */
    private boolean makeStagingRoom(EmulatedQp qp, long length) {
        if (length > EmulatedQp.WRITE_STAGING_BYTES) {
            if (qp.held > 0) {
                landHeld(qp, null); // a WRITE too large to hold must not pass what is held
            }
            return false;
        }
        if ((qp.writeStagingUsed + length > EmulatedQp.WRITE_STAGING_BYTES || qp.held == qp.heldDst.length)
                && qp.held > 0) {
            landHeld(qp, null); // so that hold() need not land (and reuse the staging area) behind the new payload
        }
        return true;
    }

    private void read(EmulatedQp qp, long at) {
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
        if (heldTotal > 0) {
            landAllHeld(qp, remoteTable(qp)); // the responder's read of its memory does not pass its posted writes
        }
        if (strict && !makeResponseRoom(qp)) {
            return;
        }
        if (!local.isNull()) { // a null region drops what is written to it
            if (strict) {
                park(qp, at, wqe.addr(), raddr, length);
            } else if (writesPassCqe) {
                hold(qp, wqe.addr(), raddr, length, table, false);
            } else {
                qp.executor.copy(wqe.addr(), raddr, length);
            }
        }
        lastBytes = length;
    }

    /**
     * Strict mode, before a READ or atomic goes out: the QP keeps at most {@code max_rd_atomic} in flight (one more
     * waits for the oldest response), and the responder takes at most its {@code max_dest_rd_atomic}: beyond that it
     * refuses the request (false, with the fault set).
     */
    private boolean makeResponseRoom(EmulatedQp qp) {
        if (qp.parked == qp.parkedDst.length) {
            landParked(qp, 1);
        }
        EmulatedQp peer = qp.peer();
        int accepts = peer == null || qp.responder() != null ? QpSpec.MAX_RD_ATOMIC : peer.spec().maxDestRdAtomic();
        if (qp.parked + 1 > accepts) {
            fault(EmulatedFault.RD_ATOMIC_EXCEEDED, String.format("%d in flight, %s takes %d (max_rd_atomic %d)",
                    qp.parked + 1, peer, accepts, qp.spec().maxRdAtomic()));
            return false;
        }
        return true;
    }

    /** Parks a response (READ data, or an atomic's value in fetch staging) behind the ones already parked. */
    private void park(EmulatedQp qp, long at, long dst, long src, long length) {
        int slot = (qp.parkedHead + qp.parked) % qp.parkedDst.length;
        qp.parkedDst[slot] = dst;
        qp.parkedSrc[slot] = src;
        qp.parkedLength[slot] = length;
        qp.parkedAt[slot] = at;
        qp.parked++;
        qp.parkedSinceNanos = System.nanoTime();
    }

    /** The fetch staging slot the next parked response would take. */
    private static long nextFetchSlot(EmulatedQp qp) {
        int slot = (qp.parkedHead + qp.parked) % qp.parkedDst.length;
        return qp.rings.deviceAddress() + qp.fetchStagingOffset + 8L * slot;
    }

    private boolean isFetchStaging(EmulatedQp qp, long src) {
        long base = qp.rings.deviceAddress() + qp.fetchStagingOffset;
        return src >= base && src < base + EmulatedQp.FETCH_STAGING_BYTES;
    }

    /** writesPassCqe mode or a relaxed WRITE: data lands later than its CQE (whose store the caller queues). */
    private void hold(EmulatedQp qp, long dst, long src, long length, RegistrationTable domain, boolean relaxed) {
        if (qp.held == qp.heldDst.length) {
            landHeld(qp, null);
        }
        if (qp.held == 0) {
            qp.heldSinceNanos = System.nanoTime();
        }
        qp.heldDst[qp.held] = dst;
        qp.heldSrc[qp.held] = src;
        qp.heldLength[qp.held] = length;
        qp.heldDomain[qp.held] = domain;
        qp.heldRelaxed[qp.held] = relaxed;
        qp.held++;
        heldTotal++;
    }

    /**
     * Issues {@code qp}'s held copies into {@code domain}'s memory (null: all), in posting order, on its own
     * executor; the others stay held, in order.
     */
    private void landHeld(EmulatedQp qp, RegistrationTable domain) {
        int n = qp.held;
        int kept = 0;
        try {
            for (int i = 0; i < n; i++) {
                if (domain != null && qp.heldDomain[i] != domain) {
                    qp.heldDst[kept] = qp.heldDst[i];
                    qp.heldSrc[kept] = qp.heldSrc[i];
                    qp.heldLength[kept] = qp.heldLength[i];
                    qp.heldDomain[kept] = qp.heldDomain[i];
                    qp.heldRelaxed[kept] = qp.heldRelaxed[i];
                    kept++;
                } else if (qp.heldLength[i] == STORE64) {
                    qp.executor.store64(qp.heldDst[i], qp.heldSrc[i]);
                } else {
                    qp.executor.copy(qp.heldDst[i], qp.heldSrc[i], qp.heldLength[i]);
                }
            }
        } catch (RuntimeException e) {
            qp.dead = true;
            qp.toError();
            nic.recordFault(qp + ": held data could not land: " + e);
            kept = 0;
        }
        for (int i = kept; i < n; i++) {
            qp.heldDomain[i] = null;
        }
        heldTotal -= n - kept;
        qp.held = kept;
        if (kept == 0) {
            qp.writeStagingUsed = 0;
        }
    }

    /**
     * The PCIe flush: every QP's data held into {@code domain}'s memory lands before {@code current}'s next work;
     * other QPs' copies run on their own executors, so those are drained (the engine waits) before {@code current}
     * goes on. Only this NIC's QPs: another NIC's engine lands its own.
     */
    private void landAllHeld(EmulatedQp current, RegistrationTable domain) {
        for (EmulatedQp qp : nic.qpSnapshot()) {
            if (qp.held > 0) {
                int before = qp.held;
                landHeld(qp, domain);
                if (qp != current && !qp.dead && qp.held != before) {
                    try {
                        qp.executor.drain();
                    } catch (RuntimeException e) {
                        qp.dead = true;
                        qp.toError();
                        nic.recordFault(qp + ": held data could not land: " + e);
                    }
                }
            }
        }
    }

    /**
     * The {@code count} oldest parked responses land, then the CQEs deferred behind them are written in posting
     * order, up to the next response still parked.
     */
    private void landParked(EmulatedQp qp, int count) {
        try {
            for (int i = 0; i < count && qp.parked > 0; i++) {
                int slot = qp.parkedHead;
                qp.parkedHead = (slot + 1) % qp.parkedDst.length;
                qp.parked--;
                if (writesPassCqe && !isFetchStaging(qp, qp.parkedSrc[slot])) {
                    hold(qp, qp.parkedDst[slot], qp.parkedSrc[slot], qp.parkedLength[slot], table, false);
                } else {
                    qp.executor.copy(qp.parkedDst[slot], qp.parkedSrc[slot], qp.parkedLength[slot]);
                }
            }
        } catch (RuntimeException e) {
            qp.deferred = 0;
            qp.parked = 0;
            qp.dead = true;
            qp.toError();
            nic.recordFault(qp + ": a parked response could not land: " + e);
            return;
        }
        long until = qp.parked == 0 ? Long.MAX_VALUE : qp.parkedAt[qp.parkedHead];
        int n = 0;
        while (n < qp.deferred && qp.deferredAt[n] < until) {
            if (reserveCqe(qp)) {
                long tail = CqeEncoder.prepareRequester(qp.cq, qp.cqProducer, qp.qpn(), (int) qp.deferredAt[n],
                        qp.deferredOpcode[n], qp.deferredBytes[n]);
                publish(qp, tail);
            }
            n++;
        }
        if (n > 0) {
            int rest = qp.deferred - n;
            System.arraycopy(qp.deferredAt, n, qp.deferredAt, 0, rest);
            System.arraycopy(qp.deferredOpcode, n, qp.deferredOpcode, 0, rest);
            System.arraycopy(qp.deferredBytes, n, qp.deferredBytes, 0, rest);
            qp.deferred = rest;
        }
    }

    private void atomic(EmulatedQp qp, long at) {
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
        if (heldTotal > 0) {
            landAllHeld(qp, remoteTable(qp)); // the atomic's read does not pass the posted writes before it
        }
        if (strict && !makeResponseRoom(qp)) {
            return;
        }
        // Strict: the old value comes back later, like READ data; it waits in a fetch staging slot until it lands.
        boolean parks = strict && !local.isNull();
        long fetchDst = local.isNull() ? 0 : parks ? nextFetchSlot(qp) : wqe.addr();
        qp.executor.atomic(wqe.opcode(), wqe.raddr() + target.translation, wqe.swapAdd(), wqe.compare(),
                fetchDst, atomicSplitNanos, atomicSplitNanos > 0 ? target.atomicLock : 0);
        if (parks) {
            park(qp, at, wqe.addr(), fetchDst, 8);
        }
        lastBytes = 8;
    }

    /** A data segment's byte_count; 0 means 2^31 bytes on mlx5, and the emulated NIC reads it the same way. */
    private long dataLength() {
        int count = wqe.byteCount();
        return count == 0 ? 1L << 31 : Integer.toUnsignedLong(count);
    }

    private enum Access { WRITE, READ, ATOMIC }

    /** The responder's key table: its NIC's (which may be another emulated NIC), or another process's copy. */
    private RegistrationTable remoteTable(EmulatedQp qp) {
        RemoteResponder across = qp.responder();
        if (across != null) {
            return across.table();
        }
        EmulatedQp peer = qp.peer();
        return peer == null ? null : peer.emulatedNic().table();
    }

    /**
     * The region {@code rkey} names at the responder, checked as the responder does: (strict) its QP's access flags,
     * then the key in the responder NIC's table, the range and the region's right.
     */
    private Registration remote(EmulatedQp qp, int rkey, long raddr, long length, Access access) {
        EmulatedQp peer = qp.peer();
        if (strict && qp.responder() == null && peer != null) {
            NicAccess needed = access == Access.WRITE ? NicAccess.REMOTE_WRITE : access == Access.READ
                    ? NicAccess.REMOTE_READ : NicAccess.REMOTE_ATOMIC;
            if (!peer.spec().remoteAccess().contains(needed)) {
                fault(EmulatedFault.QP_NO_ACCESS, peer + " allows " + peer.spec().remoteAccess() + ", not " + needed);
                return null;
            }
        }
        RegistrationTable responder = remoteTable(qp);
        Registration r = responder == null ? null : responder.find(rkey);
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

    private void fault(EmulatedFault f, String detail) {
        fault = f;
        faultDetail = detail;
        faultSyndrome = null;
    }

    /** Faults the responder detects: it NAKs the request and (strict) its own QP goes to ERROR, as in RC. */
    private static boolean detectedByResponder(EmulatedFault why) {
        return switch (why) {
            case UNKNOWN_RKEY, REMOTE_OUT_OF_RANGE, REMOTE_NO_ACCESS, MISALIGNED_ATOMIC, QP_NO_ACCESS,
                    RD_ATOMIC_EXCEEDED -> true;
            default -> false;
        };
    }

    /** The first error on a QP: an error CQE whether or not the WQE asked for one, then the error state. */
    private void fail(EmulatedQp qp, long at, int opcode, CqeSyndrome syndrome, EmulatedFault why, String detail) {
        CqeSyndrome s = faultSyndrome != null ? faultSyndrome : syndrome;
        faultSyndrome = null;
        if (qp.parked > 0) {
            landParked(qp, qp.parked); // the CQEs before this error come first
        }
        qp.toError();
        errors = errors + 1;
        String responderNote = "";
        EmulatedQp peer = qp.peer();
        if (strict && detectedByResponder(why) && peer != null && peer != qp && qp.responder() == null) {
            peer.toError();
            responderNote = "; the responder " + peer + " is in ERROR too";
        }
        nic.recordFault(String.format("%s: WQE %d (%s) failed with %s: %s%s%s", qp, at & WqeDescriptor.WQE_INDEX_MASK,
                Mlx5Opcode.name(opcode), CqeSyndrome.describe(s.code()), why.description(),
                detail == null || detail.isEmpty() ? "" : " (" + detail + ")", responderNote));
        if (reserveCqe(qp)) {
            long tail = CqeEncoder.prepareError(qp.cq, qp.cqProducer, CqeOpcode.REQ_ERR, qp.qpn(), (int) at, opcode,
                    s.code(), why.vendorSyndrome());
            publish(qp, tail);
        }
    }

    /** A WQE after the error: a WR_FLUSH CQE, nothing executed. Its size comes from its ds, clamped to the ring. */
    private int flushOne(EmulatedQp qp, long at, long target) {
        if (qp.parked > 0) {
            landParked(qp, qp.parked); // moved to ERROR from outside: the completions before come first
        }
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
        if (outstanding >= qp.cqeCount && qp.deviceRingMemory != null) {
            // GPU rings: the mirror's consumer index may be stale; look at the GPU's before calling it an overrun.
            qp.pullCqDoorbellRecord();
            consumer = CqDoorbellRecordDescriptor.getConsumerIndexAcquire(qp.cqDbrec, 0);
            outstanding = (int) ((qp.cqProducer - consumer) & CqDoorbellRecordDescriptor.CONSUMER_INDEX_MASK);
        }
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

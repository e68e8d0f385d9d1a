package io.gda4j.proxy;

import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_ATOMIC_ADD;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_FLUSH;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_NOP;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.MEMORY_HEAP;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_ADD;

import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.nic.CqeErrorRecord;
import io.gda4j.nic.HostPoster;
import io.gda4j.world.ErrorRecordDescriptor;
import io.gda4j.world.ErrorRecordDescriptor.Op;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Executes a channel's triggers as RDMA work requests that the proxy thread posts on a QP toward the peer's NIC, so
 * the proxy reaches a peer on another host (or one the GPU cannot drive the NIC for):
 * <ul>
 *   <li>PUT: RDMA WRITEs from the local heap registration into the peer's (split at {@link #MAX_WRITE_BYTES});</li>
 *   <li>SIGNAL set: an 8-byte inline WRITE of the value into the peer's word, behind the data on the same QP (an
 *       RC QP places WRITEs in order; refused where the NIC registers memory with relaxed ordering); SIGNAL add and
 *       ATOMIC_ADD: an RDMA fetch-and-add, its fetched value dropped;</li>
 *   <li>PUT_SIGNAL: the PUT, then the SIGNAL, on the same QP;</li>
 *   <li>FLUSH at position p: published ({@link DoneWord}) once every WQE posted before it has completed; other
 *       triggers keep flowing meanwhile;</li>
 *   <li>NOP: nothing.</li>
 * </ul>
 *
 * <p>Flow control (see {@link CreditBlockDescriptor}): every PUT, SIGNAL, PUT_SIGNAL and ATOMIC_ADD is one message
 * and takes one credit. The receiver grants credits: its proxy reads how many messages this side reported
 * delivered and writes back {@code delivered + window}. A sender never posts past its grant; while it waits it holds
 * the trigger in the FIFO ({@link #admits}), reports what it posted so the receiver can grant more, and after
 * {@code creditTimeoutNanos} fails the channel naming the receiver. The same handler grants credits to the peer for
 * the peer's messages to this rank, on the same QP.
 *
 * <p>Doorbells: the WQEs of a batch of triggers are published with one doorbell, in {@link #progress()} after the
 * batch. Completions: every WQE is signaled; each poll reaps the CQ. An error CQE writes the pushing rank's device error
 * record (code CQE_ERROR, the peer, the API call, the QP, WQE index, opcode and syndrome) through the
 * {@link ErrorRecordWriter}, then fails the channel with a message naming the peer; the channel's failure raises the
 * abort flags.
 *
 * <p>Batches: a call's transfers that the host queued itself ({@link VerbsTransfers}: a host function on the caller's
 * stream hands them over with {@link #offerBatch}, without a trigger) are posted at the next poll, each batch as one
 * chained post, its WRITEs then the 8-byte signal behind them, with one doorbell. They take no credits: the protocol
 * that queues them owns the memory they write into.
 *
 * <p>One thread: the proxy thread that owns the channel (or the closing thread once it no longer does); only
 * {@link #offerBatch} is called from other threads. The heaps are
 * registered once per NIC by whoever built the {@link VerbsLink}; nothing is registered per message, and the hot path
 * allocates nothing.
 */
final class VerbsHandler implements TriggerHandler {
    /** Largest single WRITE: mlx5's byte_count field is 31 bits; larger PUTs are split. */
    static final int MAX_WRITE_BYTES = 1 << 30;
    /** Flushes that may wait for completions at once; more hold the FIFO back until the oldest is published. */
    static final int FLUSH_SLOTS = 64;
    /** WQE bookkeeping entry of a credit WRITE (not a trigger of the channel). */
    private static final long CREDIT_WQE = -1;
    /** WQE bookkeeping entry of a batch's WRITE or signal (not a trigger of the channel). */
    private static final long BATCH_WQE = -2;
    /** Batches handed over and not yet posted; a full inbox fails the channel (the caller ran far ahead of the NIC). */
    static final int BATCH_INBOX = 256;

    /**
     * One call's transfers toward the peer, posted as one chained post: WRITE i of {@code bytes[i]} from
     * {@code local[i]} (the local heap's registration) to {@code remote[i]} (the peer's), then the signal: an 8-byte
     * WRITE of the word at {@code counter} to {@code signal}, or, where the NIC may place WRITEs out of order, a
     * fetch-and-add of 1 there ({@code addOne}; the counter counts the signals, so both leave the same value).
     */
    record Batch(long[] local, long[] remote, int[] bytes, long counter, long signal, boolean addOne) {
        /** Work requests the batch posts: its WRITEs and its signal. */
        int wqes() {
            return bytes.length + 1;
        }
    }

    /** Where a FLUSH's completion is published: the channel's {@code done} word that the GPU's flush polls. */
    @FunctionalInterface
    interface DoneWord {
        /** Publishes that every trigger before {@code positionPlusOne} is complete. */
        void publish(long positionPlusOne);
    }

    /** Writes the 64 bytes of a device error record (little-endian, {@link ErrorRecordDescriptor}) for the rank. */
    @FunctionalInterface
    interface ErrorRecordWriter {
        void write(ByteBuffer record);
    }

    private final String channelName;
    private final VerbsLink link;
    private final HostPoster poster;
    private final int qpn;
    private final long window;
    private final long reportEvery;
    private final long grantStep;
    private final long creditTimeoutNanos;
    private final long postTimeoutNanos;
    private final DoneWord done;
    private final ErrorRecordWriter errors;
    private final byte[] inline = new byte[8];
    private final ByteBuffer creditView;

    /** Per WQE slot (counter mod SQ size): the trigger position and words it carries, for error messages. */
    private final int sqMask;
    private final long[] wqePosition;
    private final long[] wqeWord0;
    private final long[] wqeWord1;

    /** Messages posted to the peer so far, and the count last reported to it as delivered. */
    private long posted;
    private long reported;
    /** Cumulative credits last granted to the peer (for its messages to this rank). */
    private long grantedToPeer;
    /** When the sender began waiting for credits (System.nanoTime), or 0 while it is not waiting. */
    private long stalledSince;

    /** Pending flushes: WQE counter they wait for, trigger position; a ring of FLUSH_SLOTS. */
    private final long[] flushAfter = new long[FLUSH_SLOTS];
    private final long[] flushPosition = new long[FLUSH_SLOTS];
    private long flushHead;
    private long flushTail;
    private long lastPosition = -1;
    private String failure;
    /** Batches handed over, and how many: the proxy thread polls an empty queue without allocating. */
    private final ConcurrentLinkedQueue<Batch> batches = new ConcurrentLinkedQueue<>();
    private final AtomicInteger batchesWaiting = new AtomicInteger();
    /** Set by a host function whose batch found the inbox full; the proxy thread fails the channel with it. */
    private volatile String batchRefused;
    private long batchesPosted;

    /**
     * @param window             credits this side grants the peer beyond what it has delivered (at least 1)
     * @param creditTimeoutNanos how long a sender waits for credits before it fails the channel
     * @param postTimeoutNanos   how long a post waits for a free send-queue slot (completions of earlier WQEs)
     */
    VerbsHandler(String channelName, VerbsLink link, long window, long creditTimeoutNanos, long postTimeoutNanos,
                 DoneWord done, ErrorRecordWriter errors) {
        if (window < 1) {
            throw new IllegalArgumentException("the credit window must be at least 1, got " + window);
        }
        this.channelName = channelName;
        this.link = link;
        this.poster = link.poster();
        this.qpn = poster.qp().qpn();
        this.window = window;
        this.reportEvery = Math.max(1, window / 2);
        this.grantStep = Math.max(1, window / 2);
        this.creditTimeoutNanos = creditTimeoutNanos;
        this.postTimeoutNanos = postTimeoutNanos;
        this.done = done;
        this.errors = errors;
        this.creditView = link.localCredits().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int sq = poster.qp().hostRings().sqWqebbs();
        this.sqMask = sq - 1;
        this.wqePosition = new long[sq];
        this.wqeWord0 = new long[sq];
        this.wqeWord1 = new long[sq];
    }

    // ---- flow control ------------------------------------------------------------------------------------------

    @Override
    public boolean admits(long position, long word0) {
        int kind = TriggerFifoDescriptor.kind(word0);
        if (kind == KIND_NOP) {
            return true;
        }
        if (kind == KIND_FLUSH) {
            return flushTail - flushHead < FLUSH_SLOTS; // progress() publishes the oldest and frees a slot
        }
        long granted = CreditBlockDescriptor.grantedAcquire(creditView);
        if (posted < granted) {
            stalledSince = 0;
            return true;
        }
        if (reported < posted) {
            reportDelivered(); // the receiver grants from what it knows was delivered: tell it all
            poster.ring();
        }
        long now = System.nanoTime();
        if (stalledSince == 0) {
            stalledSince = now;
        } else if (now - stalledSince > creditTimeoutNanos) {
            throw fail(String.format(Locale.ROOT, "%s: waited %d ms for credits from the receiver, %s, for trigger %d"
                            + " (%d messages posted, %d granted): the receiver's proxy is not granting (stopped,"
                            + " dead or blocked) or rank %d died", channelName, creditTimeoutNanos / 1_000_000,
                    link.peerDescription(), position, posted, granted, link.peerRank()));
        }
        return false;
    }

    /** Messages posted so far (each took one credit). */
    long posted() {
        return posted;
    }

    /** Credits granted to the peer so far, in all. */
    long grantedToPeer() {
        return grantedToPeer;
    }

    // ---- triggers ----------------------------------------------------------------------------------------------

    @Override
    public void onTrigger(long position, long word0, long word1, long next0, long next1) {
        int kind = TriggerFifoDescriptor.kind(word0);
        try {
            switch (kind) {
                case KIND_NOP:
                    return;
                case KIND_PUT:
                    checkPut(position, word0, word1);
                    put(position, word0, word1);
                    message();
                    break;
                case KIND_PUT_SIGNAL:
                    checkPut(position, word0, word1);
                    checkSignal(position + 1, next0, next1, false, word0, word1);
                    put(position, word0, word1);
                    signal(position, word0, word1, next0, next1, false);
                    message();
                    break;
                case KIND_SIGNAL:
                    checkSignal(position, word0, word1, false, word0, word1);
                    signal(position, word0, word1, word0, word1, false);
                    message();
                    break;
                case KIND_ATOMIC_ADD:
                    checkSignal(position, word0, word1, true, word0, word1);
                    signal(position, word0, word1, word0, word1, true);
                    message();
                    break;
                case KIND_FLUSH:
                    if (flushHead == flushTail && poster.retiredIndex() >= poster.producerIndex()) {
                        done.publish(position + 1); // nothing in flight: complete at once
                        break;
                    }
                    int slot = (int) (flushTail % FLUSH_SLOTS);
                    flushAfter[slot] = poster.producerIndex();
                    flushPosition[slot] = position;
                    flushTail++;
                    break;
                default:
                    throw bad(position, word0, word1, next0, next1, "its kind is unknown");
            }
        } catch (CompletionErrorException e) {
            throw completionError(e); // reaped while waiting for a free slot
        } catch (TimeoutException e) {
            throw fail(channelName + ": posting trigger " + position + " (" + Trigger.decode(word0, word1, next0, next1)
                    + ") toward " + link.peerDescription() + " found no free send-queue slot: " + e.getMessage());
        }
        lastPosition = position;
    }

    private void checkPut(long position, long word0, long word1) {
        long size = TriggerFifoDescriptor.sizeBytes(word0, word1);
        long to = TriggerFifoDescriptor.dstOffset(word0);
        long from = TriggerFifoDescriptor.srcOffset(word1);
        long heap = link.heapBytes();
        if (TriggerFifoDescriptor.dstMemory(word1) != MEMORY_HEAP || TriggerFifoDescriptor.srcMemory(word1) != MEMORY_HEAP
                || to > heap || size > heap - to || from > heap || size > heap - from) {
            throw bad(position, word0, word1, 0, 0, "it addresses memory outside the symmetric heap of " + heap
                    + " bytes");
        }
    }

    private void checkSignal(long position, long s0, long s1, boolean atomic, long word0, long word1) {
        long offset = TriggerFifoDescriptor.wordOffset(s0);
        if (TriggerFifoDescriptor.signalMemory(s0) != MEMORY_HEAP || (offset & 7) != 0 || offset > link.heapBytes() - 8) {
            throw bad(position, word0, word1, 0, 0, "its signal word is misaligned or outside the symmetric heap of "
                    + link.heapBytes() + " bytes");
        }
        if (!atomic && TriggerFifoDescriptor.signalOp(s0) != SIGNAL_OP_ADD && link.relaxedOrdering()) {
            throw bad(position, word0, word1, 0, 0, "a SET signal is an 8-byte WRITE, and this NIC writes with relaxed"
                    + " ordering, so it could land before the data it guards: signal with ADD (an RDMA atomic)");
        }
    }

    private void put(long position, long word0, long word1) throws TimeoutException {
        long size = TriggerFifoDescriptor.sizeBytes(word0, word1);
        long to = link.peerHeap() + TriggerFifoDescriptor.dstOffset(word0);
        long from = link.localHeap() + TriggerFifoDescriptor.srcOffset(word1);
        for (long done = 0; done < size; done += MAX_WRITE_BYTES) {
            int bytes = (int) Math.min(MAX_WRITE_BYTES, size - done);
            note(position, word0, word1);
            poster.postWrite(to + done, link.peerRkey(), from + done, link.localLkey(), bytes, postTimeoutNanos);
        }
    }

    /** The signal part: {@code s0}/{@code s1} are its words (the second slot of a PUT_SIGNAL). */
    private void signal(long position, long word0, long word1, long s0, long s1, boolean atomic)
            throws TimeoutException {
        long target = link.peerHeap() + TriggerFifoDescriptor.wordOffset(s0);
        long value = TriggerFifoDescriptor.signalValue(s0, s1);
        note(position, word0, word1);
        if (atomic || TriggerFifoDescriptor.signalOp(s0) == SIGNAL_OP_ADD) {
            poster.postFetchAdd(target, link.peerRkey(), value, link.fetchAddress(), link.fetchLkey(),
                    postTimeoutNanos);
        } else {
            CreditBlockDescriptor.encodeWord(inline, value);
            poster.postWriteInline(target, link.peerRkey(), inline, postTimeoutNanos);
        }
    }

    /** One message posted: one credit spent; report deliveries now and then so the receiver can grant more. */
    private void message() throws TimeoutException {
        posted++;
        if (posted - reported >= reportEvery) {
            reportDeliveredOrThrow();
        }
    }

    private void reportDelivered() {
        try {
            reportDeliveredOrThrow();
        } catch (TimeoutException e) {
            throw fail(channelName + ": reporting deliveries to " + link.peerDescription()
                    + " found no free send-queue slot: " + e.getMessage());
        } catch (CompletionErrorException e) {
            throw completionError(e);
        }
    }

    /** An 8-byte WRITE of {@code posted} into the peer's {@code delivered} word, behind the messages it counts. */
    private void reportDeliveredOrThrow() throws TimeoutException {
        noteCredit();
        CreditBlockDescriptor.encodeWord(inline, posted);
        poster.postWriteInline(link.peerCredits() + CreditBlockDescriptor.DELIVERED_OFFSET, link.peerCreditsRkey(),
                inline, postTimeoutNanos);
        reported = posted;
    }

    private void note(long position, long word0, long word1) {
        int slot = (int) (poster.producerIndex() & sqMask);
        wqePosition[slot] = position;
        wqeWord0[slot] = word0;
        wqeWord1[slot] = word1;
    }

    private void noteCredit() {
        note(CREDIT_WQE, 0, 0);
    }

    // ---- completions, grants, flushes --------------------------------------------------------------------------

    @Override
    public int progress() {
        if (failure != null) {
            return 0;
        }
        if (batchRefused != null) {
            throw fail(batchRefused);
        }
        int work;
        try {
            poster.ring(); // one doorbell for everything the batch posted (a no-op when nothing is new)
            work = postBatches();
            work += poster.poll();
            work += grant();
        } catch (CompletionErrorException e) {
            throw completionError(e);
        } catch (TimeoutException e) {
            throw fail(channelName + ": posting host-queued transfers or granting credits to "
                    + link.peerDescription() + " found no free send-queue slot: " + e.getMessage());
        }
        long retired = poster.retiredIndex();
        while (flushHead < flushTail) {
            int slot = (int) (flushHead % FLUSH_SLOTS);
            if (flushAfter[slot] > retired) {
                break;
            }
            done.publish(flushPosition[slot] + 1);
            flushHead++;
            work++;
        }
        return work;
    }

    /**
     * Hands {@code batch} to the proxy thread, which posts it at its next poll: from any thread (a host function on a
     * CUDA stream: no CUDA, no waiting). False when the inbox is full; the channel then fails at its next poll.
     */
    boolean offerBatch(Batch batch) {
        if (batchesWaiting.incrementAndGet() <= BATCH_INBOX) {
            batches.offer(batch);
            return true;
        }
        batchesWaiting.decrementAndGet();
        batchRefused = String.format(Locale.ROOT, "%s: %d host-queued batches toward %s were waiting to be posted"
                + " when another came: the proxy thread is not posting (blocked, or the NIC stopped completing)",
                channelName, BATCH_INBOX, link.peerDescription());
        return false;
    }

    /** Batches posted so far (each one chained post with one doorbell). */
    long batchesPosted() {
        return batchesPosted;
    }

    /** Posts the batches handed over since the last poll, each as one chained post rung once. */
    private int postBatches() throws TimeoutException {
        int posted = 0;
        for (Batch b = batches.poll(); b != null; b = batches.poll()) {
            batchesWaiting.decrementAndGet();
            for (int i = 0; i < b.bytes().length; i++) {
                note(BATCH_WQE, 0, 0);
                poster.postWrite(b.remote()[i], link.peerRkey(), b.local()[i], link.localLkey(), b.bytes()[i],
                        postTimeoutNanos);
            }
            note(BATCH_WQE, 0, 0);
            if (b.addOne()) {
                poster.postFetchAdd(b.signal(), link.peerRkey(), 1, link.fetchAddress(), link.fetchLkey(),
                        postTimeoutNanos);
            } else {
                poster.postWrite(b.signal(), link.peerRkey(), b.counter(), link.localLkey(), 8, postTimeoutNanos);
            }
            poster.ring();
            batchesPosted++;
            posted++;
        }
        return posted;
    }

    /** As the receiver: grants the peer {@code delivered + window} once that is a step beyond the last grant. */
    private int grant() throws TimeoutException {
        long target = CreditBlockDescriptor.deliveredAcquire(creditView) + window;
        if (target - grantedToPeer < grantStep) {
            return 0;
        }
        noteCredit();
        CreditBlockDescriptor.encodeWord(inline, target);
        poster.postWriteInline(link.peerCredits() + CreditBlockDescriptor.GRANTED_OFFSET, link.peerCreditsRkey(),
                inline, postTimeoutNanos);
        poster.ring();
        grantedToPeer = target;
        return 1;
    }

    @Override
    public boolean awaitCompletion(long timeoutNanos) {
        if (failure != null) {
            return true; // nothing more completes on a failed QP; the failure was reported
        }
        long deadline = System.nanoTime() + timeoutNanos;
        poster.ring();
        while (true) {
            progress(); // posts the batches still handed over, too
            if (poster.retiredIndex() >= poster.producerIndex()) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.onSpinWait();
        }
    }

    @Override
    public String inFlight() {
        return String.format(Locale.ROOT, "RDMA work toward %s up to trigger position %d: %d of %d WQEBBs completed"
                        + " on QP 0x%06x; %d messages posted, %d credits granted by the receiver; %d host-queued"
                        + " batches posted", link.peerDescription(), lastPosition, poster.retiredIndex(),
                poster.producerIndex(), qpn, posted, CreditBlockDescriptor.grantedAcquire(creditView), batchesPosted);
    }

    // ---- failures ----------------------------------------------------------------------------------------------

    /** Writes the device error record for an error CQE, then returns the exception that fails the channel. */
    private ProxyException completionError(CompletionErrorException e) {
        int index = e.wqeIndex();
        int slot = index & sqMask;
        long position = wqePosition[slot];
        long word0 = wqeWord0[slot];
        long word1 = wqeWord1[slot];
        boolean credit = position == CREDIT_WQE;
        boolean batch = position == BATCH_WQE;
        Op op = credit ? Op.NONE : batch ? Op.PUT : op(TriggerFifoDescriptor.kind(word0));
        ByteBuffer record = ByteBuffer.allocate(ErrorRecordDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        record.putInt(ErrorRecordDescriptor.CODE_OFFSET, CqeErrorRecord.CODE);
        record.putInt(ErrorRecordDescriptor.RANK_OFFSET, link.localRank());
        record.putInt(ErrorRecordDescriptor.PEER_OFFSET, link.peerRank());
        record.putInt(ErrorRecordDescriptor.OP_OFFSET, op.value());
        record.putLong(ErrorRecordDescriptor.OFFSET_OFFSET, index);
        record.putLong(ErrorRecordDescriptor.EXPECTED_OFFSET, e.wqeOpcode());
        record.putLong(ErrorRecordDescriptor.SEEN_OFFSET, CqeErrorRecord.seen(e.cqe().syndrome(),
                e.cqe().vendorSyndrome(), e.cqe().cqeOpcode()));
        record.putInt(ErrorRecordDescriptor.BLOCK_OFFSET, -1); // the host proxy, not a GPU thread
        record.putInt(ErrorRecordDescriptor.THREAD_OFFSET, -1);
        record.putInt(ErrorRecordDescriptor.CMP_OFFSET, qpn);
        record.putInt(ErrorRecordDescriptor.CLAIMED_OFFSET, 1);
        String what = credit ? "a credit update" : batch ? "a host-queued transfer (WQE " + index + ")"
                : "trigger " + position + " (" + Trigger.decode(word0, word1, 0, 0) + ")";
        String message = String.format(Locale.ROOT, "%s: the NIC failed %s of %s toward %s: %s%s", channelName,
                Mlx5Opcode.name(e.wqeOpcode()), what, link.peerDescription(), e.getMessage(), hint(e.syndrome()));
        try {
            errors.write(record);
        } catch (RuntimeException writeFailed) {
            message += "; writing the device error record failed too: " + writeFailed.getMessage();
        }
        return fail(message);
    }

    private String hint(CqeSyndrome syndrome) {
        if (syndrome == null) {
            return "";
        }
        switch (syndrome) {
            case REMOTE_ACCESS:
            case REMOTE_INVAL_REQ:
                return ". Rank " + link.peerRank() + " refused the key or the range: its heap registration is gone (the"
                        + " rank closed or died) or the address lies outside it";
            case TRANSPORT_RETRY_EXC:
            case RNR_RETRY_EXC:
                return ". Rank " + link.peerRank() + "'s NIC stopped answering: is the rank alive and its host up?";
            case WR_FLUSH:
                return ". Flushed after an earlier failure on the same QP";
            default:
                return "";
        }
    }

    private static Op op(int kind) {
        switch (kind) {
            case KIND_PUT:
                return Op.PUT;
            case KIND_PUT_SIGNAL:
                return Op.PUT_SIGNAL;
            case KIND_SIGNAL:
                return Op.SIGNAL;
            case KIND_ATOMIC_ADD:
                return Op.ATOMIC_ADD;
            default:
                return Op.NONE;
        }
    }

    private ProxyException fail(String message) {
        failure = message;
        return new ProxyException(message);
    }

    private ProxyException bad(long position, long word0, long word1, long next0, long next1, String why) {
        return fail(String.format(Locale.ROOT, "%s: refused trigger %d (%s; words 0x%016x 0x%016x) for %s: %s",
                channelName, position, Trigger.decode(word0, word1, next0, next1), word0, word1,
                link.peerDescription(), why));
    }
}

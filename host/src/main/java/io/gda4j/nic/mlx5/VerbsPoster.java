package io.gda4j.nic.mlx5;

import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.CqeOpcode;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.nic.HostPoster;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpState;
import io.gda4j.verbs.SendQueue;
import io.gda4j.verbs.VerbsConstants;

import java.util.Locale;
import java.util.concurrent.TimeoutException;

/**
 * The {@link HostPoster} of a real mlx5 QP: each request is an {@code ibv_send_wr} handed to the provider's
 * {@code post_send} ({@link SendQueue}), completions come from its {@code poll_cq}, so the WQE stores, the doorbell
 * record, the write-combining doorbell and their barriers are rdma-core's own on every CPU (on AArch64
 * {@code dmb oshst} and {@code dsb st}, which no JVM fence emits). Counters count work requests; at most the QP's
 * {@code max_send_wr} are in flight, the provider's own limit, so a post past it waits (polling) instead of failing
 * with ENOMEM. Every request is signaled and carries {@code wr_id} = its counter; a request behind an uncompleted
 * READ or atomic carries {@code IBV_SEND_FENCE}.
 */
final class VerbsPoster implements HostPoster {
    private final NicQp qp;
    private final SendQueue queue;
    private final int qpn;
    private final int slotMask;
    private final int maxInFlight;
    private final int maxInlineBytes;
    /** mlx5 opcode per slot, for error reports. */
    private final int[] opcodes;
    private long producer;
    private long rung;
    private long retired;
    private long fetchEnd;
    private String failure;

    /**
     * @param qp          the QP (its label, state and NIC name go into messages)
     * @param queue       its send queue as libibverbs posts it; {@code queue.slots()} at least {@code maxInFlight}
     * @param maxInFlight the QP's granted {@code max_send_wr}
     */
    VerbsPoster(NicQp qp, SendQueue queue, int maxInFlight, int maxInlineBytes) {
        if (maxInFlight < 1 || maxInFlight > queue.slots()) {
            throw new IllegalArgumentException("max_send_wr " + maxInFlight + " must be from 1 to the " + queue.slots()
                    + " slots of the send queue");
        }
        this.qp = qp;
        this.queue = queue;
        this.qpn = qp.qpn();
        this.slotMask = queue.slots() - 1;
        this.maxInFlight = maxInFlight;
        this.maxInlineBytes = maxInlineBytes;
        this.opcodes = new int[queue.slots()];
    }

    @Override
    public NicQp qp() {
        return qp;
    }

    @Override
    public long producerIndex() {
        return producer;
    }

    @Override
    public long retiredIndex() {
        return retired;
    }

    @Override
    public long postWrite(long raddr, int rkey, long laddr, int lkey, int byteCount, long timeoutNanos)
            throws TimeoutException {
        long at = reserve(timeoutNanos);
        queue.writeRdma(slot(at), at, VerbsConstants.IBV_WR_RDMA_WRITE, flags(at), raddr, rkey, laddr, lkey,
                byteCount);
        return finish(at, Mlx5Opcode.RDMA_WRITE);
    }

    @Override
    public long postWriteInline(long raddr, int rkey, byte[] payload, long timeoutNanos) throws TimeoutException {
        HostPoster.requireInline(qp, payload.length, maxInlineBytes);
        long at = reserve(timeoutNanos);
        queue.writeInline(slot(at), at, flags(at), raddr, rkey, payload, payload.length);
        return finish(at, Mlx5Opcode.RDMA_WRITE);
    }

    @Override
    public long postRead(long raddr, int rkey, long laddr, int lkey, int byteCount, long timeoutNanos)
            throws TimeoutException {
        long at = reserve(timeoutNanos);
        queue.writeRdma(slot(at), at, VerbsConstants.IBV_WR_RDMA_READ, flags(at), raddr, rkey, laddr, lkey,
                byteCount);
        finish(at, Mlx5Opcode.RDMA_READ);
        fetchEnd = producer;
        return at;
    }

    @Override
    public long postFetchAdd(long raddr, int rkey, long add, long laddr, int lkey, long timeoutNanos)
            throws TimeoutException {
        long at = reserve(timeoutNanos);
        queue.writeAtomic(slot(at), at, VerbsConstants.IBV_WR_ATOMIC_FETCH_AND_ADD, flags(at), raddr, rkey, add, 0,
                laddr, lkey);
        finish(at, Mlx5Opcode.ATOMIC_FA);
        fetchEnd = producer;
        return at;
    }

    @Override
    public long postCompareSwap(long raddr, int rkey, long compare, long swap, long laddr, int lkey,
                                long timeoutNanos) throws TimeoutException {
        long at = reserve(timeoutNanos);
        queue.writeAtomic(slot(at), at, VerbsConstants.IBV_WR_ATOMIC_CMP_AND_SWP, flags(at), raddr, rkey, compare,
                swap, laddr, lkey);
        finish(at, Mlx5Opcode.ATOMIC_CS);
        fetchEnd = producer;
        return at;
    }

    /** One {@code ibv_post_send} for every request written since the last ring, chained in order. */
    @Override
    public void ring() {
        if (rung == producer) {
            return;
        }
        requireUsable();
        long refused = queue.post(slot(rung));
        if (refused >= 0) {
            failure = String.format(Locale.ROOT, "%s (QP 0x%06x on %s): ibv_post_send refused request %d (%s) of"
                            + " those %d to %d: %s; the QP is unusable from now on", qp.label(), qpn, qp.nic().name(),
                    refused, Mlx5Opcode.name(opcodes[slot(refused)]), rung, producer - 1, queue.lastPostError());
            rung = refused;
            throw new NicException(failure);
        }
        rung = producer;
    }

    /**
     * Consumes the completions that have arrived (in posting order: RC completes in order) and retires their
     * requests; throws {@link CompletionErrorException} for the first failed one, worded as an mlx5 error CQE
     * (the status mapped back to mlx5's syndrome, the vendor syndrome as the provider reports it).
     */
    @Override
    public int poll() {
        requireUsable();
        int n = queue.poll();
        DecodedCqe firstError = null;
        for (int i = 0; i < n; i++) {
            long wrId = queue.completionWrId(i);
            if (wrId != retired || wrId >= rung) {
                throw new IllegalStateException(String.format(Locale.ROOT, "%s: a completion for request %d, but"
                        + " request %d was next (%d posted)", qp.label(), wrId, retired, rung));
            }
            retired = wrId + 1;
            int status = queue.completionStatus(i);
            if (status != VerbsConstants.IBV_WC_SUCCESS && firstError == null) {
                firstError = new DecodedCqe(CqeOpcode.REQ_ERR, 0, qpn, (int) (wrId & WqeDescriptor.WQE_INDEX_MASK),
                        opcodes[slot(wrId)], queue.completionByteLength(i), SendQueue.mlx5Syndrome(status),
                        queue.completionVendorError(i) & 0xff);
            }
        }
        if (firstError != null) {
            throw new CompletionErrorException(firstError);
        }
        return n;
    }

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

    private long reserve(long timeoutNanos) throws TimeoutException {
        requireUsable();
        if (qp.state() == QpState.RESET) {
            throw new IllegalStateException(qp.label() + ": connect the QP before posting");
        }
        long deadline = System.nanoTime() + timeoutNanos;
        while (producer - retired >= maxInFlight) {
            ring();
            if (poll() == 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw timeout("a free send queue slot", producer + 1 - maxInFlight);
                }
                Thread.onSpinWait();
            }
        }
        return producer;
    }

    /** Signaled; fenced while an earlier READ or atomic (ending at fetchEnd) has not completed. */
    private int flags(long at) {
        boolean fence = at >= fetchEnd && retired < fetchEnd;
        return VerbsConstants.IBV_SEND_SIGNALED | (fence ? VerbsConstants.IBV_SEND_FENCE : 0);
    }

    private long finish(long at, int mlx5Opcode) {
        opcodes[slot(at)] = mlx5Opcode;
        if (at > rung) {
            queue.link(slot(at - 1), slot(at));
        }
        producer = at + 1;
        return at;
    }

    private int slot(long counter) {
        return (int) (counter & slotMask);
    }

    /** Refuses work on a closed QP (its verbs objects are freed) or after the provider refused a post. */
    private void requireUsable() {
        qp.hostRings(); // throws once the QP is closed
        if (failure != null) {
            throw new NicException(failure);
        }
    }

    private TimeoutException timeout(String what, long wanted) {
        return new TimeoutException(String.format(Locale.ROOT, "%s (QP 0x%06x on %s): waited for %s, but only %d of"
                        + " %d work requests completed (wanted %d); the NIC stopped answering or the QP is not"
                        + " connected", qp.label(), qpn, qp.nic().name(), what, retired, producer, wanted));
    }
}

package io.gda4j.verbs;

import static io.gda4j.verbs.IbvSendWrDescriptor.ATOMIC_COMPARE_ADD_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.ATOMIC_REMOTE_ADDR_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.ATOMIC_RKEY_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.ATOMIC_SWAP_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.NEXT_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.NUM_SGE_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.OPCODE_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.RDMA_REMOTE_ADDR_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.RDMA_RKEY_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.SEND_FLAGS_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.SGE_ADDR_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.SGE_LENGTH_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.SGE_LKEY_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.SGE_SIZE;
import static io.gda4j.verbs.IbvSendWrDescriptor.SG_LIST_OFFSET;
import static io.gda4j.verbs.IbvSendWrDescriptor.WR_ID_OFFSET;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;

/**
 * A QP's send queue as libibverbs posts it: {@code ibv_post_send} and {@code ibv_poll_cq} are inline in verbs.h
 * ({@code qp->context->ops.post_send(qp, wr, bad_wr)}, {@code cq->context->ops.poll_cq(cq, n, wc)}) and not exported,
 * so this calls the provider's functions through those pointers, as the inlines do ({@link IbvContextDescriptor}
 * offsets, checked against the header). The provider then writes the WQEs and rings the doorbell with rdma-core's
 * own barriers for this CPU ({@code dmb oshst} / {@code dsb st} on AArch64, {@code sfence} on x86-64).
 *
 * <p>Work requests ({@link IbvSendWrDescriptor}) live in native memory, one per slot, each with one SGE and room for
 * an inline payload; {@link #post} hands the provider a chain of consecutive slots ({@link #link}), one call for the
 * whole chain. Completions land in a native array of {@value #COMPLETIONS_PER_POLL} {@code ibv_wc}s. One thread;
 * writing a slot allocates nothing.
 */
public final class SendQueue {
    /** Completions one {@link #poll()} takes at most. */
    public static final int COMPLETIONS_PER_POLL = 16;

    private final long qp;
    private final int slots;
    private final int inlineStride;
    private final Function postSend;
    private final Function pollCq;
    private final Memory requests;
    private final Memory sges;
    private final Memory inlines;
    private final Memory completions;
    private final Memory badRequest;
    private final Pointer[] requestPointers;
    private final Object[] postArgs;
    private final Object[] pollArgs;
    private int lastPostError;

    /**
     * @param qp             the {@code struct ibv_qp *}
     * @param cq             its send CQ's {@code struct ibv_cq *}
     * @param slots          work requests that may be written and not yet completed (a power of two)
     * @param maxInlineBytes largest inline payload a slot holds
     */
    public SendQueue(long qp, long cq, int slots, int maxInlineBytes) {
        if (Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("slots must be a power of two, not " + slots);
        }
        this.qp = qp;
        this.slots = slots;
        this.inlineStride = Math.max(8, (maxInlineBytes + 7) & ~7);
        this.postSend = Function.getFunction(new Pointer(op(qp, IbvQpDescriptor.CONTEXT_OFFSET,
                IbvContextDescriptor.OPS_POST_SEND_OFFSET, "post_send")));
        this.pollCq = Function.getFunction(new Pointer(op(cq, IbvCqDescriptor.CONTEXT_OFFSET,
                IbvContextDescriptor.OPS_POLL_CQ_OFFSET, "poll_cq")));
        this.requests = new Memory((long) slots * IbvSendWrDescriptor.SIZE);
        this.sges = new Memory((long) slots * SGE_SIZE);
        this.inlines = new Memory((long) slots * inlineStride);
        this.completions = new Memory((long) COMPLETIONS_PER_POLL * IbvWcDescriptor.SIZE);
        this.badRequest = new Memory(8);
        requests.clear();
        sges.clear();
        this.requestPointers = new Pointer[slots];
        for (int i = 0; i < slots; i++) {
            requestPointers[i] = requests.share((long) i * IbvSendWrDescriptor.SIZE);
        }
        this.postArgs = new Object[] {new Pointer(qp), null, badRequest};
        this.pollArgs = new Object[] {new Pointer(cq), COMPLETIONS_PER_POLL, completions};
    }

    /** The provider's op at {@code opOffset} of the context that {@code object}'s field at {@code contextOffset} names. */
    private static long op(long object, int contextOffset, int opOffset, String name) {
        long context = new Pointer(object).getLong(contextOffset);
        long op = context == 0 ? 0 : new Pointer(context).getLong(opOffset);
        if (op == 0) {
            throw new IllegalStateException(String.format("the verbs object 0x%x has no %s in its context's ops",
                    object, name));
        }
        return op;
    }

    /** Slots of this queue. */
    public int slots() {
        return slots;
    }

    /** An RDMA WRITE or READ ({@code IBV_WR_*}) of {@code length} bytes in {@code slot}, ending a chain. */
    public void writeRdma(int slot, long wrId, int opcode, int flags, long raddr, int rkey, long laddr, int lkey,
                          int length) {
        long at = begin(slot, wrId, opcode, flags, laddr, length, lkey);
        requests.setLong(at + RDMA_REMOTE_ADDR_OFFSET, raddr);
        requests.setInt(at + RDMA_RKEY_OFFSET, rkey);
    }

    /**
     * An inline RDMA WRITE of {@code length} bytes of {@code payload}, copied into the slot's own buffer: the
     * provider copies it into the WQE at {@link #post}, so the caller's array may be reused at once.
     */
    public void writeInline(int slot, long wrId, int flags, long raddr, int rkey, byte[] payload, int length) {
        if (length > inlineStride) {
            throw new IllegalArgumentException("an inline payload of " + length + " bytes exceeds the slot's "
                    + inlineStride);
        }
        long buffer = (long) slot * inlineStride;
        inlines.write(buffer, payload, 0, length);
        long at = begin(slot, wrId, VerbsConstants.IBV_WR_RDMA_WRITE, flags | VerbsConstants.IBV_SEND_INLINE,
                Pointer.nativeValue(inlines) + buffer, length, 0);
        requests.setLong(at + RDMA_REMOTE_ADDR_OFFSET, raddr);
        requests.setInt(at + RDMA_RKEY_OFFSET, rkey);
    }

    /** An 8-byte atomic ({@code IBV_WR_ATOMIC_*}); the old value goes to {@code laddr}/{@code lkey}. */
    public void writeAtomic(int slot, long wrId, int opcode, int flags, long raddr, int rkey, long compareAdd,
                            long swap, long laddr, int lkey) {
        long at = begin(slot, wrId, opcode, flags, laddr, 8, lkey);
        requests.setLong(at + ATOMIC_REMOTE_ADDR_OFFSET, raddr);
        requests.setLong(at + ATOMIC_COMPARE_ADD_OFFSET, compareAdd);
        requests.setLong(at + ATOMIC_SWAP_OFFSET, swap);
        requests.setInt(at + ATOMIC_RKEY_OFFSET, rkey);
    }

    private long begin(int slot, long wrId, int opcode, int flags, long addr, int length, int lkey) {
        long at = (long) slot * IbvSendWrDescriptor.SIZE;
        requests.setMemory(at, IbvSendWrDescriptor.SIZE, (byte) 0);
        long sge = (long) slot * SGE_SIZE;
        sges.setLong(sge + SGE_ADDR_OFFSET, addr);
        sges.setInt(sge + SGE_LENGTH_OFFSET, length);
        sges.setInt(sge + SGE_LKEY_OFFSET, lkey);
        requests.setLong(at + WR_ID_OFFSET, wrId);
        requests.setLong(at + SG_LIST_OFFSET, Pointer.nativeValue(sges) + sge);
        requests.setInt(at + NUM_SGE_OFFSET, 1);
        requests.setInt(at + OPCODE_OFFSET, opcode);
        requests.setInt(at + SEND_FLAGS_OFFSET, flags);
        return at;
    }

    /** Chains {@code next} after {@code slot}: one {@link #post} hands both to the provider. */
    public void link(int slot, int next) {
        requests.setLong((long) slot * IbvSendWrDescriptor.SIZE + NEXT_OFFSET, Pointer.nativeValue(requests)
                + (long) next * IbvSendWrDescriptor.SIZE);
    }

    /**
     * {@code ibv_post_send(qp, chain starting at firstSlot, &bad_wr)}. Returns -1 when every request was posted;
     * else the {@code wr_id} of the first one the provider refused (those before it were posted), with
     * {@link #lastPostError()} saying why.
     */
    public long post(int firstSlot) {
        postArgs[1] = requestPointers[firstSlot];
        badRequest.setLong(0, 0);
        lastPostError = postSend.invokeInt(postArgs);
        if (lastPostError == 0) {
            return -1;
        }
        long bad = badRequest.getLong(0);
        long offset = bad - Pointer.nativeValue(requests);
        if (bad == 0 || offset < 0 || offset >= (long) slots * IbvSendWrDescriptor.SIZE) {
            return requests.getLong((long) firstSlot * IbvSendWrDescriptor.SIZE + WR_ID_OFFSET);
        }
        return requests.getLong(offset + WR_ID_OFFSET);
    }

    /** What the last refused {@link #post} returned, in words. */
    public String lastPostError() {
        return Errno.describe(lastPostError < 0 ? -lastPostError : lastPostError);
    }

    /**
     * {@code ibv_poll_cq(cq, COMPLETIONS_PER_POLL, wc)}: how many completions were taken (read them with
     * {@link #completionWrId} and the like). Throws {@link VerbsException} when the provider fails the poll.
     */
    public int poll() {
        int n = pollCq.invokeInt(pollArgs);
        if (n < 0) {
            throw new VerbsException("ibv_poll_cq on QP 0x" + Long.toHexString(qp) + " failed (" + n + "): the CQ is"
                    + " in error (overrun) or the device is gone", 0);
        }
        return n;
    }

    public long completionWrId(int i) {
        return completions.getLong((long) i * IbvWcDescriptor.SIZE + IbvWcDescriptor.WR_ID_OFFSET);
    }

    /** {@code IBV_WC_*} status of completion {@code i}. */
    public int completionStatus(int i) {
        return completions.getInt((long) i * IbvWcDescriptor.SIZE + IbvWcDescriptor.STATUS_OFFSET);
    }

    public int completionVendorError(int i) {
        return completions.getInt((long) i * IbvWcDescriptor.SIZE + IbvWcDescriptor.VENDOR_ERR_OFFSET);
    }

    public int completionByteLength(int i) {
        return completions.getInt((long) i * IbvWcDescriptor.SIZE + IbvWcDescriptor.BYTE_LEN_OFFSET);
    }

    /**
     * The mlx5 CQE syndrome ({@code MLX5_CQE_SYNDROME_*}) behind an {@code IBV_WC_*} status: the inverse of
     * {@code mlx5_handle_error_cqe} (rdma-core, providers/mlx5/cq.c), which maps every syndrome mlx5dv.h names to a
     * status of its own; 0 for success, and for a status that no syndrome maps to ({@code IBV_WC_GENERAL_ERR}).
     */
    public static int mlx5Syndrome(int wcStatus) {
        return switch (wcStatus) {
            case VerbsConstants.IBV_WC_LOC_LEN_ERR -> 0x01;
            case VerbsConstants.IBV_WC_LOC_QP_OP_ERR -> 0x02;
            case VerbsConstants.IBV_WC_LOC_PROT_ERR -> 0x04;
            case VerbsConstants.IBV_WC_WR_FLUSH_ERR -> 0x05;
            case VerbsConstants.IBV_WC_MW_BIND_ERR -> 0x06;
            case VerbsConstants.IBV_WC_BAD_RESP_ERR -> 0x10;
            case VerbsConstants.IBV_WC_LOC_ACCESS_ERR -> 0x11;
            case VerbsConstants.IBV_WC_REM_INV_REQ_ERR -> 0x12;
            case VerbsConstants.IBV_WC_REM_ACCESS_ERR -> 0x13;
            case VerbsConstants.IBV_WC_REM_OP_ERR -> 0x14;
            case VerbsConstants.IBV_WC_RETRY_EXC_ERR -> 0x15;
            case VerbsConstants.IBV_WC_RNR_RETRY_EXC_ERR -> 0x16;
            case VerbsConstants.IBV_WC_REM_ABORT_ERR -> 0x22;
            default -> 0;
        };
    }
}

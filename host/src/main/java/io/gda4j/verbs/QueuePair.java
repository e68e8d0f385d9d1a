package io.gda4j.verbs;

import static io.gda4j.verbs.VerbsConstants.IBV_QPS_INIT;
import static io.gda4j.verbs.VerbsConstants.IBV_QPS_RESET;
import static io.gda4j.verbs.VerbsConstants.IBV_QPS_RTR;
import static io.gda4j.verbs.VerbsConstants.IBV_QPS_RTS;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_ACCESS_FLAGS;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_AV;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_DEST_QPN;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_MAX_DEST_RD_ATOMIC;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_MAX_QP_RD_ATOMIC;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_MIN_RNR_TIMER;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_PATH_MTU;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_PKEY_INDEX;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_PORT;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_RETRY_CNT;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_RNR_RETRY;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_RQ_PSN;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_SQ_PSN;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_STATE;
import static io.gda4j.verbs.VerbsConstants.IBV_QP_TIMEOUT;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.util.List;
import java.util.StringJoiner;
import java.util.function.Consumer;

/**
 * A reliable-connected queue pair ({@code struct ibv_qp *}): created in RESET, brought to RTS by
 * {@link #toInit}, {@link #toRtr} and {@link #toRts} (or {@link #connect}), then fed WQEs through its
 * {@link #mlx5Buffers()} rather than {@code ibv_post_send}.
 */
public final class QueuePair extends VerbsResource {
    private static final int INIT_MASK = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    /** The {@code ibv_modify_qp} mask of INIT → RTR: what {@link #writeRtrAttributes} fills, and the state. */
    public static final int RTR_ATTRIBUTE_MASK = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN
            | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    private static final int RTS_MASK = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY
            | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;

    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final int qpNumber;
    private final QueuePairCapabilities capabilities;
    private int state = IBV_QPS_RESET;

    private QueuePair(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, long handle,
                      QueuePairCapabilities capabilities) {
        super(pd.context().registry(), handle, List.of(pd, sendCq, recvCq));
        this.pd = pd;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.qpNumber = new Pointer(handle).getInt(IbvQpDescriptor.QP_NUM_OFFSET);
        this.capabilities = capabilities;
    }

    static QueuePair create(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                            QueuePairCapabilities requested) {
        try (Memory attr = new Memory(IbvQpInitAttrDescriptor.SIZE)) {
            attr.clear();
            attr.setLong(IbvQpInitAttrDescriptor.SEND_CQ_OFFSET, sendCq.handle());
            attr.setLong(IbvQpInitAttrDescriptor.RECV_CQ_OFFSET, recvCq.handle());
            int cap = IbvQpInitAttrDescriptor.CAP_OFFSET;
            attr.setInt(cap + IbvQpCapDescriptor.MAX_SEND_WR_OFFSET, requested.maxSendWr());
            attr.setInt(cap + IbvQpCapDescriptor.MAX_RECV_WR_OFFSET, requested.maxRecvWr());
            attr.setInt(cap + IbvQpCapDescriptor.MAX_SEND_SGE_OFFSET, requested.maxSendSge());
            attr.setInt(cap + IbvQpCapDescriptor.MAX_RECV_SGE_OFFSET, requested.maxRecvSge());
            attr.setInt(cap + IbvQpCapDescriptor.MAX_INLINE_DATA_OFFSET, requested.maxInlineData());
            attr.setInt(IbvQpInitAttrDescriptor.QP_TYPE_OFFSET, VerbsConstants.IBV_QPT_RC);
            attr.setInt(IbvQpInitAttrDescriptor.SQ_SIG_ALL_OFFSET, 0);
            long qp = LibIbverbs.ibv_create_qp(pd.handle(), Pointer.nativeValue(attr));
            if (qp == 0) {
                throw VerbsException.failed("ibv_create_qp(" + pd + ", RC, " + requested + ")", Native.getLastError(),
                        "The depths must not exceed the device's max_qp_wr and max_sge, the inline size the"
                                + " provider's limit (mlx5: about 900 bytes), and the CQs must be large enough.");
            }
            QueuePairCapabilities granted = new QueuePairCapabilities(
                    attr.getInt(cap + IbvQpCapDescriptor.MAX_SEND_WR_OFFSET),
                    attr.getInt(cap + IbvQpCapDescriptor.MAX_RECV_WR_OFFSET),
                    attr.getInt(cap + IbvQpCapDescriptor.MAX_SEND_SGE_OFFSET),
                    attr.getInt(cap + IbvQpCapDescriptor.MAX_RECV_SGE_OFFSET),
                    attr.getInt(cap + IbvQpCapDescriptor.MAX_INLINE_DATA_OFFSET));
            return new QueuePair(pd, sendCq, recvCq, qp, granted);
        }
    }

    /** The 24-bit QP number: the peer's dest_qp_num, and the qpn of every ctrl segment and doorbell. */
    public int qpNumber() {
        return qpNumber;
    }

    /** What the provider granted at creation. */
    public QueuePairCapabilities capabilities() {
        return capabilities;
    }

    /** {@code IBV_QPS_*} as set by the last successful transition. */
    public synchronized int state() {
        return state;
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    public CompletionQueue sendCq() {
        return sendCq;
    }

    public CompletionQueue recvCq() {
        return recvCq;
    }

    /** RESET → INIT: port, P_Key index and the access the peer gets. */
    public void toInit(RcConnectOptions options) {
        RdmaContext.portByte(options.portNum());
        modify(IBV_QPS_RESET, IBV_QPS_INIT, INIT_MASK, attr -> {
            attr.setShort(IbvQpAttrDescriptor.PKEY_INDEX_OFFSET, (short) options.pkeyIndex());
            attr.setByte(IbvQpAttrDescriptor.PORT_NUM_OFFSET, (byte) options.portNum());
            attr.setInt(IbvQpAttrDescriptor.QP_ACCESS_FLAGS_OFFSET, options.accessFlags());
        }, "Check that port " + options.portNum() + " exists and that the access flags (0x"
                + Integer.toHexString(options.accessFlags()) + ") are supported: remote atomics need the device's"
                + " atomic_cap.");
    }

    /** INIT → RTR: the path to the peer's QP and the PSN it starts with. A non-zero peer GID adds a GRH (RoCE). */
    public void toRtr(RcPeer peer, RcConnectOptions options) {
        modify(IBV_QPS_INIT, IBV_QPS_RTR, RTR_ATTRIBUTE_MASK, attr -> writeRtrAttributes(attr, peer, options),
                String.format("Check the path to peer QP 0x%06x (LID 0x%x, GID %s): MTU %d must not exceed either"
                        + " port's active MTU, GID index %d must exist on port %d (RoCE needs the peer's GID), and"
                        + " max_dest_rd_atomic %d must not exceed the device's max_qp_rd_atom.", peer.qpn(),
                peer.lid(), peer.gid(), VerbsConstants.mtuBytes(options.pathMtu()), options.sgidIndex(),
                options.portNum(), options.maxDestRdAtomic()));
    }

    /**
     * Writes into {@code attr} (a zeroed {@code struct ibv_qp_attr}, {@link IbvQpAttrDescriptor}) the fields that
     * {@link #toRtr} passes to {@code ibv_modify_qp} under {@link #RTR_ATTRIBUTE_MASK}, except the state: the peer's QP
     * number, PSN, LID and (when not zero) GID, and the local path MTU, depths, port and GRH choices. A pure function
     * of its arguments, so a test checks the bytes without a NIC.
     */
    public static void writeRtrAttributes(Pointer attr, RcPeer peer, RcConnectOptions options) {
        boolean global = !peer.gid().isZero();
        attr.setInt(IbvQpAttrDescriptor.PATH_MTU_OFFSET, options.pathMtu());
        attr.setInt(IbvQpAttrDescriptor.DEST_QP_NUM_OFFSET, peer.qpn());
        attr.setInt(IbvQpAttrDescriptor.RQ_PSN_OFFSET, peer.psn());
        attr.setByte(IbvQpAttrDescriptor.MAX_DEST_RD_ATOMIC_OFFSET, (byte) options.maxDestRdAtomic());
        attr.setByte(IbvQpAttrDescriptor.MIN_RNR_TIMER_OFFSET, (byte) options.minRnrTimer());
        attr.setShort(IbvQpAttrDescriptor.ah(IbvAhAttrDescriptor.DLID_OFFSET), (short) peer.lid());
        attr.setByte(IbvQpAttrDescriptor.ah(IbvAhAttrDescriptor.SL_OFFSET), (byte) options.serviceLevel());
        attr.setByte(IbvQpAttrDescriptor.ah(IbvAhAttrDescriptor.IS_GLOBAL_OFFSET), (byte) (global ? 1 : 0));
        attr.setByte(IbvQpAttrDescriptor.ah(IbvAhAttrDescriptor.PORT_NUM_OFFSET), (byte) options.portNum());
        if (global) {
            attr.write(IbvQpAttrDescriptor.ahGrh(IbvGlobalRouteDescriptor.DGID_OFFSET), peer.gid().raw(), 0,
                    IbvGidDescriptor.SIZE);
            attr.setByte(IbvQpAttrDescriptor.ahGrh(IbvGlobalRouteDescriptor.SGID_INDEX_OFFSET),
                    (byte) options.sgidIndex());
            attr.setByte(IbvQpAttrDescriptor.ahGrh(IbvGlobalRouteDescriptor.HOP_LIMIT_OFFSET),
                    (byte) options.hopLimit());
            attr.setByte(IbvQpAttrDescriptor.ahGrh(IbvGlobalRouteDescriptor.TRAFFIC_CLASS_OFFSET),
                    (byte) options.trafficClass());
        }
    }

    /** RTR → RTS: our starting PSN, timeouts and retries. */
    public void toRts(int sqPsn, RcConnectOptions options) {
        if ((sqPsn & ~0xffffff) != 0 || options.retryCount() > 7 || options.rnrRetry() > 7
                || options.timeout() > 31) {
            throw new IllegalArgumentException(String.format("PSN 0x%x must be 24-bit, retry_cnt %d and rnr_retry"
                    + " %d at most 7, timeout %d at most 31", sqPsn, options.retryCount(), options.rnrRetry(),
                    options.timeout()));
        }
        modify(IBV_QPS_RTR, IBV_QPS_RTS, RTS_MASK, attr -> {
            attr.setByte(IbvQpAttrDescriptor.TIMEOUT_OFFSET, (byte) options.timeout());
            attr.setByte(IbvQpAttrDescriptor.RETRY_CNT_OFFSET, (byte) options.retryCount());
            attr.setByte(IbvQpAttrDescriptor.RNR_RETRY_OFFSET, (byte) options.rnrRetry());
            attr.setInt(IbvQpAttrDescriptor.SQ_PSN_OFFSET, sqPsn);
            attr.setByte(IbvQpAttrDescriptor.MAX_RD_ATOMIC_OFFSET, (byte) options.maxRdAtomic());
        }, "Check that max_rd_atomic " + options.maxRdAtomic() + " does not exceed the device's"
                + " max_qp_init_rd_atom.");
    }

    /** RESET → INIT → RTR → RTS in one call. */
    public void connect(RcPeer peer, int localPsn, RcConnectOptions options) {
        toInit(options);
        toRtr(peer, options);
        toRts(localPsn, options);
    }

    /**
     * {@code mlx5dv_init_obj(MLX5DV_OBJ_QP)}: the send queue ring, doorbell record and doorbell register that the
     * GPU needs to post WQEs itself.
     */
    public Mlx5QpBuffers mlx5Buffers() {
        requireOpen();
        Mlx5Support.requireAvailable("the QP's mlx5 buffers");
        try (Memory obj = new Memory(Mlx5dvObjDescriptor.SIZE); Memory out = new Memory(Mlx5dvQpDescriptor.SIZE)) {
            obj.clear();
            out.clear(); // comp_mask is an input too: 0 asks for no optional fields
            obj.setLong(Mlx5dvObjDescriptor.QP_IN_OFFSET, handle());
            obj.setLong(Mlx5dvObjDescriptor.QP_OUT_OFFSET, Pointer.nativeValue(out));
            int rc = LibMlx5.mlx5dv_init_obj(Pointer.nativeValue(obj), Mlx5dvObjDescriptor.OBJ_QP);
            if (rc != 0) {
                throw VerbsException.failed("mlx5dv_init_obj(" + this + ", MLX5DV_OBJ_QP)", VerbsException.errnoOf(rc),
                        Mlx5Support.NOT_MLX5_HINT);
            }
            return Mlx5QpBuffers.read(out);
        }
    }

    @Override
    public String toString() {
        return String.format("QP 0x%06x on %s", qpNumber, pd.context().deviceName());
    }

    @Override
    void destroy(long nativeHandle) {
        int rc = LibIbverbs.ibv_destroy_qp(nativeHandle);
        if (rc != 0) {
            throw VerbsException.failed("ibv_destroy_qp(" + this + ")", VerbsException.errnoOf(rc), "");
        }
    }

    private synchronized void modify(int from, int to, int mask, Consumer<Pointer> fill, String hint) {
        requireOpen();
        if (state != from) {
            throw new IllegalStateException(String.format("%s: %s -> %s needs the QP in %s, but it is in %s%s",
                    this, VerbsConstants.qpStateName(from), VerbsConstants.qpStateName(to),
                    VerbsConstants.qpStateName(from), VerbsConstants.qpStateName(state),
                    state == IBV_QPS_RESET ? "; call toInit first" : state == IBV_QPS_INIT ? "; call toRtr first"
                            : ""));
        }
        try (Memory attr = new Memory(IbvQpAttrDescriptor.SIZE)) {
            attr.clear();
            attr.setInt(IbvQpAttrDescriptor.QP_STATE_OFFSET, to);
            fill.accept(attr);
            int rc = LibIbverbs.ibv_modify_qp(handle(), Pointer.nativeValue(attr), mask);
            if (rc != 0) {
                throw VerbsException.failed(String.format("ibv_modify_qp(%s, %s -> %s, mask 0x%x = %s)", this,
                        VerbsConstants.qpStateName(from), VerbsConstants.qpStateName(to), mask, maskNames(mask)),
                        VerbsException.errnoOf(rc), hint);
            }
            state = to;
        }
    }

    static String maskNames(int mask) {
        String[] names = {"STATE", "CUR_STATE", "EN_SQD_ASYNC_NOTIFY", "ACCESS_FLAGS", "PKEY_INDEX", "PORT", "QKEY",
            "AV", "PATH_MTU", "TIMEOUT", "RETRY_CNT", "RNR_RETRY", "RQ_PSN", "MAX_QP_RD_ATOMIC", "ALT_PATH",
            "MIN_RNR_TIMER", "SQ_PSN", "MAX_DEST_RD_ATOMIC", "PATH_MIG_STATE", "CAP", "DEST_QPN"};
        StringJoiner joined = new StringJoiner("|");
        for (int bit = 0; bit < 32; bit++) {
            if ((mask & (1 << bit)) != 0) {
                joined.add(bit < names.length ? names[bit] : "bit" + bit);
            }
        }
        return joined.toString();
    }
}

package io.gda4j.mlx5;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Locale;

/**
 * The mlx5 PRM commands that make a CQ and an RC QP whose rings live in GPU memory, passed through DEVX
 * ({@code mlx5dv_devx_obj_create} / {@code _modify}), as NVSHMEM makes its GPU-resident rings: the CQE ring and the
 * send queue are umems ({@code mlx5dv_devx_umem_reg_ex} over a dma-buf of GPU memory), and so are the two doorbell
 * records. A command is big-endian 32-bit words of bit fields, set as rdma-core's {@code DEVX_SET} /
 * {@code DEVX_SET64} set them; every field's place is a {@link PrmField}, from the PRM layouts ({@code mlx5_ifc.h}),
 * and {@code DevxCommandsTest} holds the fields and whole commands to bytes those macros computed (test vectors
 * committed with a note on how they were made: the layouts are not installed headers).
 *
 * <pre>
 *  create_cq_in (272 B)   0 opcode   16 cq_context (cqc, 64 B): dbr_umem_valid, cqe_sz, dbr_umem_id, log_cq_size,
 *                         uar_page, c_eqn, log_page_size, dbr_addr   80 cq_umem_offset   88 cq_umem_id, _valid
 *  create_qp_in (272 B)   0 opcode   24 qpc (232 B)   264 wq_umem_id   268 wq_umem_valid
 *  rst2init / init2rtr / rtr2rts_qp_in (272 B)   0 opcode   9 qpn   24 qpc (the fields the transition sets)
 *  create_cq_out / create_qp_out (16 B)   0 status   4 syndrome   9 cqn / qpn
 * </pre>
 */
public final class DevxCommands {
    /** Bytes of each command this class makes ({@code DEVX_ST_SZ_BYTES}); the outputs are {@link #OUT_BYTES}. */
    public static final int CMD_BYTES = 272;
    public static final int OUT_BYTES = 16;

    public static final int OP_CREATE_CQ = 0x400;
    public static final int OP_CREATE_QP = 0x500;
    public static final int OP_RST2INIT_QP = 0x502;
    public static final int OP_INIT2RTR_QP = 0x503;
    public static final int OP_RTR2RTS_QP = 0x504;

    /** {@code qpc.st}: reliable connected. */
    static final int QPC_ST_RC = 0;
    /** {@code qpc.pm_state}: migrated (no alternate path). */
    static final int QPC_PM_STATE_MIGRATED = 3;
    /** {@code qpc.rq_type}: a zero-length receive queue (gda4j posts no receives). */
    static final int QPC_RQ_TYPE_ZERO = 3;
    /** {@code qpc.atomic_mode}: 8-byte atomics. */
    static final int QPC_ATOMIC_MODE_UP_TO_64 = 3;
    /** {@code qpc.log_msg_max}: messages up to 1 GiB, the largest WQE the device API posts. */
    static final int LOG_MSG_MAX = 30;
    /** {@code qpc.min_rnr_nak}: as the verbs path's default. */
    static final int MIN_RNR_NAK = 12;
    /** {@code ads.hop_limit} on RoCE. */
    static final int HOP_LIMIT = 64;

    /** A PRM field: its place in bits from the start of its struct, and its width, as {@code mlx5_ifc.h} says. */
    public enum PrmField {
        CREATE_CQ_IN_OPCODE("create_cq_in.opcode", 0, 16),
        CREATE_CQ_IN_CQ_CONTEXT("create_cq_in.cq_context", 128, 512),
        CREATE_CQ_IN_CQ_UMEM_OFFSET("create_cq_in.cq_umem_offset", 640, 64),
        CREATE_CQ_IN_CQ_UMEM_ID("create_cq_in.cq_umem_id", 704, 32),
        CREATE_CQ_IN_CQ_UMEM_VALID("create_cq_in.cq_umem_valid", 736, 1),
        CQC_DBR_UMEM_VALID("cqc.dbr_umem_valid", 6, 1),
        CQC_CQE_SZ("cqc.cqe_sz", 8, 3),
        CQC_CC("cqc.cc", 11, 1),
        CQC_OI("cqc.oi", 14, 1),
        CQC_DBR_UMEM_ID("cqc.dbr_umem_id", 32, 32),
        CQC_LOG_CQ_SIZE("cqc.log_cq_size", 99, 5),
        CQC_UAR_PAGE("cqc.uar_page", 104, 24),
        CQC_C_EQN("cqc.c_eqn", 184, 8),
        CQC_LOG_PAGE_SIZE("cqc.log_page_size", 195, 5),
        CQC_DBR_ADDR("cqc.dbr_addr", 448, 64),
        CREATE_CQ_OUT_CQN("create_cq_out.cqn", 72, 24),
        CREATE_QP_IN_OPCODE("create_qp_in.opcode", 0, 16),
        CREATE_QP_IN_QPC("create_qp_in.qpc", 192, 1856),
        CREATE_QP_IN_WQ_UMEM_ID("create_qp_in.wq_umem_id", 2112, 32),
        CREATE_QP_IN_WQ_UMEM_VALID("create_qp_in.wq_umem_valid", 2144, 1),
        CREATE_QP_OUT_STATUS("create_qp_out.status", 0, 8),
        CREATE_QP_OUT_SYNDROME("create_qp_out.syndrome", 32, 32),
        CREATE_QP_OUT_QPN("create_qp_out.qpn", 72, 24),
        RST2INIT_QP_IN_OPCODE("rst2init_qp_in.opcode", 0, 16),
        RST2INIT_QP_IN_QPN("rst2init_qp_in.qpn", 72, 24),
        RST2INIT_QP_IN_QPC("rst2init_qp_in.qpc", 192, 1856),
        INIT2RTR_QP_IN_OPCODE("init2rtr_qp_in.opcode", 0, 16),
        INIT2RTR_QP_IN_QPN("init2rtr_qp_in.qpn", 72, 24),
        INIT2RTR_QP_IN_QPC("init2rtr_qp_in.qpc", 192, 1856),
        RTR2RTS_QP_IN_OPCODE("rtr2rts_qp_in.opcode", 0, 16),
        RTR2RTS_QP_IN_QPN("rtr2rts_qp_in.qpn", 72, 24),
        RTR2RTS_QP_IN_QPC("rtr2rts_qp_in.qpc", 192, 1856),
        QPC_ST("qpc.st", 8, 8),
        QPC_PM_STATE("qpc.pm_state", 19, 2),
        QPC_PD("qpc.pd", 40, 24),
        QPC_MTU("qpc.mtu", 64, 3),
        QPC_LOG_MSG_MAX("qpc.log_msg_max", 67, 5),
        QPC_LOG_RQ_SIZE("qpc.log_rq_size", 73, 4),
        QPC_NO_SQ("qpc.no_sq", 80, 1),
        QPC_LOG_SQ_SIZE("qpc.log_sq_size", 81, 4),
        QPC_UAR_PAGE("qpc.uar_page", 104, 24),
        QPC_USER_INDEX("qpc.user_index", 136, 24),
        QPC_LOG_PAGE_SIZE("qpc.log_page_size", 163, 5),
        QPC_REMOTE_QPN("qpc.remote_qpn", 168, 24),
        QPC_PATH_PKEY_INDEX("qpc.primary_address_path.pkey_index", 208, 16),
        QPC_PATH_GRH("qpc.primary_address_path.grh", 232, 1),
        QPC_PATH_MLID("qpc.primary_address_path.mlid", 233, 7),
        QPC_PATH_RLID("qpc.primary_address_path.rlid", 240, 16),
        QPC_PATH_ACK_TIMEOUT("qpc.primary_address_path.ack_timeout", 256, 5),
        QPC_PATH_SRC_ADDR_INDEX("qpc.primary_address_path.src_addr_index", 264, 8),
        QPC_PATH_HOP_LIMIT("qpc.primary_address_path.hop_limit", 280, 8),
        QPC_PATH_TCLASS("qpc.primary_address_path.tclass", 292, 8),
        QPC_PATH_RGID_RIP("qpc.primary_address_path.rgid_rip", 320, 128),
        QPC_PATH_DSCP("qpc.primary_address_path.dscp", 458, 6),
        QPC_PATH_UDP_SPORT("qpc.primary_address_path.udp_sport", 464, 16),
        QPC_PATH_ETH_PRIO("qpc.primary_address_path.eth_prio", 481, 3),
        QPC_PATH_SL("qpc.primary_address_path.sl", 484, 4),
        QPC_PATH_VHCA_PORT_NUM("qpc.primary_address_path.vhca_port_num", 488, 8),
        QPC_PATH_RMAC_47_32("qpc.primary_address_path.rmac_47_32", 496, 16),
        QPC_LOG_ACK_REQ_FREQ("qpc.log_ack_req_freq", 896, 4),
        QPC_LOG_SRA_MAX("qpc.log_sra_max", 904, 3),
        QPC_RETRY_COUNT("qpc.retry_count", 909, 3),
        QPC_RNR_RETRY("qpc.rnr_retry", 912, 3),
        QPC_NEXT_SEND_PSN("qpc.next_send_psn", 968, 24),
        QPC_CQN_SND("qpc.cqn_snd", 1000, 24),
        QPC_LOG_RRA_MAX("qpc.log_rra_max", 1160, 3),
        QPC_ATOMIC_MODE("qpc.atomic_mode", 1164, 4),
        QPC_RRE("qpc.rre", 1168, 1),
        QPC_RWE("qpc.rwe", 1169, 1),
        QPC_RAE("qpc.rae", 1170, 1),
        QPC_PAGE_OFFSET("qpc.page_offset", 1172, 6),
        QPC_MIN_RNR_NAK("qpc.min_rnr_nak", 1187, 5),
        QPC_NEXT_RCV_PSN("qpc.next_rcv_psn", 1192, 24),
        QPC_CQN_RCV("qpc.cqn_rcv", 1256, 24),
        QPC_DBR_ADDR("qpc.dbr_addr", 1280, 64),
        QPC_RQ_TYPE("qpc.rq_type", 1381, 3),
        QPC_DBR_UMEM_VALID("qpc.dbr_umem_valid", 1667, 1),
        QPC_DBR_UMEM_ID("qpc.dbr_umem_id", 1824, 32);

        private final String cName;
        private final int bit;
        private final int width;

        PrmField(String cName, int bit, int width) {
            this.cName = cName;
            this.bit = bit;
            this.width = width;
        }

        /** {@code struct.field} as {@code mlx5_ifc.h} spells it (nested fields with dots). */
        public String cName() {
            return cName;
        }

        /** Bit offset from the start of its struct ({@code __devx_bit_off}). */
        public int bit() {
            return bit;
        }

        /** Width in bits ({@code __devx_bit_sz}). */
        public int width() {
            return width;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s (bit %d, %d bits)", cName, bit, width);
        }
    }

    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private DevxCommands() {
    }

    /**
     * {@code DEVX_SET}: {@code value}'s low bits into the field at {@code baseBit} + its place (a field of at most 32
     * bits, within one big-endian 32-bit word); {@code DEVX_SET64} for a 64-bit field (on a 64-bit boundary).
     */
    static void set(byte[] cmd, int baseBit, PrmField f, long value) {
        int bit = baseBit + f.bit;
        if (f.width == 64) {
            if ((bit & 63) != 0) {
                throw new IllegalArgumentException(f + " is not on a 64-bit boundary");
            }
            LONG.set(cmd, bit / 8, value);
            return;
        }
        if (f.width > 32 || (bit & 31) + f.width > 32) {
            throw new IllegalArgumentException(f + " does not lie in one 32-bit word");
        }
        long mask = f.width == 32 ? 0xffffffffL : (1L << f.width) - 1;
        int shift = 32 - f.width - (bit & 31);
        int at = (bit / 32) * 4;
        long word = (int) INT.get(cmd, at) & 0xffffffffL;
        word = (word & ~(mask << shift)) | ((value & mask) << shift);
        INT.set(cmd, at, (int) word);
    }

    /** {@code DEVX_GET} of a field of at most 32 bits. */
    static long get(byte[] cmd, int baseBit, PrmField f) {
        int bit = baseBit + f.bit;
        long mask = f.width == 32 ? 0xffffffffL : (1L << f.width) - 1;
        int shift = 32 - f.width - (bit & 31);
        return (((int) INT.get(cmd, (bit / 32) * 4) & 0xffffffffL) >>> shift) & mask;
    }

    /** Copies {@code bytes} to the byte at which {@code f} starts ({@code memcpy(DEVX_ADDR_OF(...))}). */
    static void copy(byte[] cmd, int baseBit, PrmField f, byte[] bytes) {
        System.arraycopy(bytes, 0, cmd, (baseBit + f.bit) / 8, bytes.length);
    }

    /**
     * A CQ of {@code 2^logSize} 64-byte CQEs.
     *
     * @param umemId      the CQE ring's umem; {@code umemOffset} its first byte there
     * @param dbrUmemId   the umem of the CQ's doorbell record; {@code dbrOffset} its place there
     * @param uarPage     the UAR page the CQ arms through (gda4j never arms it)
     * @param eqn         the event queue ({@code mlx5dv_devx_query_eqn})
     * @param logPageSize log2 of the umem's page size in 4 KiB units (GPU pages of 64 KiB: 4)
     */
    public record CqParams(int umemId, long umemOffset, int dbrUmemId, long dbrOffset, int logSize, int uarPage,
                           int eqn, int logPageSize) {
    }

    /** {@code CREATE_CQ} for {@code p}: collapsed and overrun checking off, 64-byte CQEs. */
    public static byte[] createCq(CqParams p) {
        byte[] in = new byte[CMD_BYTES];
        set(in, 0, PrmField.CREATE_CQ_IN_OPCODE, OP_CREATE_CQ);
        set(in, 0, PrmField.CREATE_CQ_IN_CQ_UMEM_ID, p.umemId());
        set(in, 0, PrmField.CREATE_CQ_IN_CQ_UMEM_OFFSET, p.umemOffset());
        set(in, 0, PrmField.CREATE_CQ_IN_CQ_UMEM_VALID, 1);
        int cqc = PrmField.CREATE_CQ_IN_CQ_CONTEXT.bit;
        set(in, cqc, PrmField.CQC_DBR_UMEM_VALID, 1);
        set(in, cqc, PrmField.CQC_CQE_SZ, 0); // 64-byte CQEs
        set(in, cqc, PrmField.CQC_DBR_UMEM_ID, p.dbrUmemId());
        set(in, cqc, PrmField.CQC_LOG_CQ_SIZE, p.logSize());
        set(in, cqc, PrmField.CQC_UAR_PAGE, p.uarPage());
        set(in, cqc, PrmField.CQC_C_EQN, p.eqn());
        set(in, cqc, PrmField.CQC_LOG_PAGE_SIZE, p.logPageSize());
        set(in, cqc, PrmField.CQC_DBR_ADDR, p.dbrOffset());
        return in;
    }

    /**
     * An RC QP of {@code 2^logSqSize} WQEBBs and no receive queue.
     *
     * @param pd          the protection domain number
     * @param uarPage     the UAR page whose doorbell register rings it
     * @param cqn         its CQ (send and receive)
     * @param wqUmemId    the send queue's umem; {@code dbrUmemId} and {@code dbrOffset} its doorbell record's
     * @param userIndex   a number of the caller's own, reported in its CQEs
     * @param logPageSize log2 of the umem's page size in 4 KiB units
     */
    public record QpParams(int pd, int uarPage, int cqn, int logSqSize, int wqUmemId, int dbrUmemId, long dbrOffset,
                           int userIndex, int logPageSize) {
    }

    /** {@code CREATE_QP} for {@code p}. */
    public static byte[] createQp(QpParams p) {
        byte[] in = new byte[CMD_BYTES];
        set(in, 0, PrmField.CREATE_QP_IN_OPCODE, OP_CREATE_QP);
        set(in, 0, PrmField.CREATE_QP_IN_WQ_UMEM_ID, p.wqUmemId());
        set(in, 0, PrmField.CREATE_QP_IN_WQ_UMEM_VALID, 1);
        int qpc = PrmField.CREATE_QP_IN_QPC.bit;
        set(in, qpc, PrmField.QPC_ST, QPC_ST_RC);
        set(in, qpc, PrmField.QPC_PM_STATE, QPC_PM_STATE_MIGRATED);
        set(in, qpc, PrmField.QPC_PD, p.pd());
        set(in, qpc, PrmField.QPC_UAR_PAGE, p.uarPage());
        set(in, qpc, PrmField.QPC_RQ_TYPE, QPC_RQ_TYPE_ZERO);
        set(in, qpc, PrmField.QPC_CQN_SND, p.cqn());
        set(in, qpc, PrmField.QPC_CQN_RCV, p.cqn());
        set(in, qpc, PrmField.QPC_LOG_SQ_SIZE, p.logSqSize());
        set(in, qpc, PrmField.QPC_LOG_PAGE_SIZE, p.logPageSize());
        set(in, qpc, PrmField.QPC_USER_INDEX, p.userIndex());
        set(in, qpc, PrmField.QPC_DBR_UMEM_VALID, 1);
        set(in, qpc, PrmField.QPC_DBR_UMEM_ID, p.dbrUmemId());
        set(in, qpc, PrmField.QPC_DBR_ADDR, p.dbrOffset());
        return in;
    }

    /** {@code RST2INIT_QP}: remote write, read and 8-byte atomics allowed, on {@code port}. */
    public static byte[] rst2init(int qpn, int port) {
        byte[] in = new byte[CMD_BYTES];
        set(in, 0, PrmField.RST2INIT_QP_IN_OPCODE, OP_RST2INIT_QP);
        set(in, 0, PrmField.RST2INIT_QP_IN_QPN, qpn);
        int qpc = PrmField.RST2INIT_QP_IN_QPC.bit;
        set(in, qpc, PrmField.QPC_RWE, 1);
        set(in, qpc, PrmField.QPC_RRE, 1);
        set(in, qpc, PrmField.QPC_RAE, 1);
        set(in, qpc, PrmField.QPC_ATOMIC_MODE, QPC_ATOMIC_MODE_UP_TO_64);
        set(in, qpc, PrmField.QPC_PATH_VHCA_PORT_NUM, port);
        set(in, qpc, PrmField.QPC_PATH_PKEY_INDEX, 0);
        set(in, qpc, PrmField.QPC_PM_STATE, QPC_PM_STATE_MIGRATED);
        return in;
    }

    /**
     * The peer's side of the path for INIT -> RTR: on InfiniBand its {@code lid} ({@code gid} null), on RoCE its
     * {@code gid} (16 bytes), this port's {@code gidIndex}, the UDP source port and the next hop's MAC (6 bytes);
     * {@code sl} and {@code trafficClass} as the fabric wants them.
     */
    public record RtrPath(int lid, byte[] gid, int gidIndex, int udpSourcePort, int sl, int trafficClass,
                          byte[] rmac) {
        public RtrPath {
            if (gid != null && (gid.length != 16 || rmac == null || rmac.length != 6)) {
                throw new IllegalArgumentException("a RoCE path needs a 16-byte GID and a 6-byte MAC");
            }
        }
    }

    /** {@code INIT2RTR_QP} toward {@code remoteQpn} over {@code path}. */
    public static byte[] init2rtr(int qpn, int mtu, int remoteQpn, int receivePsn, int logMaxRdAtomic, RtrPath path) {
        byte[] in = new byte[CMD_BYTES];
        set(in, 0, PrmField.INIT2RTR_QP_IN_OPCODE, OP_INIT2RTR_QP);
        set(in, 0, PrmField.INIT2RTR_QP_IN_QPN, qpn);
        int qpc = PrmField.INIT2RTR_QP_IN_QPC.bit;
        set(in, qpc, PrmField.QPC_MTU, mtu);
        set(in, qpc, PrmField.QPC_LOG_MSG_MAX, LOG_MSG_MAX);
        set(in, qpc, PrmField.QPC_REMOTE_QPN, remoteQpn);
        set(in, qpc, PrmField.QPC_NEXT_RCV_PSN, receivePsn);
        set(in, qpc, PrmField.QPC_MIN_RNR_NAK, MIN_RNR_NAK);
        set(in, qpc, PrmField.QPC_LOG_RRA_MAX, logMaxRdAtomic);
        if (path.gid() == null) {
            set(in, qpc, PrmField.QPC_PATH_TCLASS, path.trafficClass());
            set(in, qpc, PrmField.QPC_PATH_RLID, path.lid());
            set(in, qpc, PrmField.QPC_PATH_MLID, 0);
            set(in, qpc, PrmField.QPC_PATH_SL, path.sl());
            set(in, qpc, PrmField.QPC_PATH_GRH, 0);
        } else {
            copy(in, qpc, PrmField.QPC_PATH_RMAC_47_32, path.rmac());
            set(in, qpc, PrmField.QPC_PATH_HOP_LIMIT, HOP_LIMIT);
            set(in, qpc, PrmField.QPC_PATH_SRC_ADDR_INDEX, path.gidIndex());
            set(in, qpc, PrmField.QPC_PATH_ETH_PRIO, path.sl());
            set(in, qpc, PrmField.QPC_PATH_UDP_SPORT, path.udpSourcePort());
            set(in, qpc, PrmField.QPC_PATH_DSCP, path.trafficClass() >> 2);
            copy(in, qpc, PrmField.QPC_PATH_RGID_RIP, path.gid());
        }
        return in;
    }

    /** {@code RTR2RTS_QP}: an ACK for every packet, the retry counts and the ACK timeout (4.096 us x 2^t). */
    public static byte[] rtr2rts(int qpn, int sendPsn, int logMaxRdAtomic, int retryCount, int rnrRetry,
                                 int ackTimeout) {
        byte[] in = new byte[CMD_BYTES];
        set(in, 0, PrmField.RTR2RTS_QP_IN_OPCODE, OP_RTR2RTS_QP);
        set(in, 0, PrmField.RTR2RTS_QP_IN_QPN, qpn);
        int qpc = PrmField.RTR2RTS_QP_IN_QPC.bit;
        set(in, qpc, PrmField.QPC_LOG_ACK_REQ_FREQ, 0);
        set(in, qpc, PrmField.QPC_LOG_SRA_MAX, logMaxRdAtomic);
        set(in, qpc, PrmField.QPC_NEXT_SEND_PSN, sendPsn);
        set(in, qpc, PrmField.QPC_RETRY_COUNT, retryCount);
        set(in, qpc, PrmField.QPC_RNR_RETRY, rnrRetry);
        set(in, qpc, PrmField.QPC_PATH_ACK_TIMEOUT, ackTimeout);
        return in;
    }

    /** The CQ number a {@code CREATE_CQ}'s output names. */
    public static int cqnOf(byte[] out) {
        return (int) get(out, 0, PrmField.CREATE_CQ_OUT_CQN);
    }

    /** The QP number a {@code CREATE_QP}'s output names. */
    public static int qpnOf(byte[] out) {
        return (int) get(out, 0, PrmField.CREATE_QP_OUT_QPN);
    }

    /** A command output's status (0: done) and syndrome, the words a failure is reported with. */
    public static String statusOf(byte[] out) {
        return String.format(Locale.ROOT, "status 0x%02x, syndrome 0x%08x", get(out, 0, PrmField.CREATE_QP_OUT_STATUS),
                get(out, 0, PrmField.CREATE_QP_OUT_SYNDROME));
    }
}

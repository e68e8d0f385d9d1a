package io.gda4j.ibgda;

/**
 * Byte layout of the device QP: the struct in GPU memory through which a kernel posts WQEs on one queue pair and
 * reaps its completions ({@code struct DeviceQp} in {@code gda4j/transport/ibgda/device_qp.cuh}, same field names).
 * Little-endian (GPU order). A peer entry of the device view points at it ({@code PeerEntry.handle}).
 *
 * <pre>
 *  line 0: rings (host-written once, read-only for kernels)
 *   0                 8                 16                24                32                40
 *   +-----------------+-----------------+-----------------+-----------------+-----------------+
 *   | sq_buf          | dbrec           | doorbell        | cq_buf          | cq_dbrec        |
 *   +-----------------+-----------------+-----------------+-----------------+-----------------+
 *   40                48       52       56       60       64
 *   +-----------------+--------+--------+--------+--------+
 *   | wqe_sizes       |sq_wqebb|cqe_cnt | qpn    | flags  |
 *   +-----------------+--------+--------+--------+--------+
 *  line 1: addressing and flush (host-written once, read-only for kernels)
 *   64                72                80                88       92       96
 *   +-----------------+-----------------+-----------------+--------+--------+
 *   | local_base      | remote_base     | heap_size_bytes | lkey   | rkey   |
 *   +-----------------+-----------------+-----------------+--------+--------+
 *   96                104               112      116      120      124      128
 *   +-----------------+-----------------+--------+--------+--------+--------+
 *   | flush_qp        | flush_flag      |flush_rk|disc_lk |max_inl | peer   |
 *   +-----------------+-----------------+--------+--------+--------+--------+
 *  line 2: producer state (kernels only; zero at start), and discard_addr (host-written once)
 *   128               136               144               152      156      160
 *   +-----------------+-----------------+-----------------+--------+--------+
 *   | resv_head       | ready_head      | prod_idx        | db_lock| resvd  |
 *   +-----------------+-----------------+-----------------+--------+--------+
 *   160               168               176               184               192
 *   +-----------------+-----------------+-----------------+-----------------+
 *   | fetch_end       | gets_posted     | gets_flushed    | discard_addr    |
 *   +-----------------+-----------------+-----------------+-----------------+
 *  line 3: consumer state (kernels only; zero at start), and the QP's place among its peer's QPs (host-written once)
 *   192               200               208      212      216      220      224 .. 256
 *   +-----------------+-----------------+--------+--------+--------+--------+-----------+
 *   | cons_head       | cq_ci           |poll_lck| error  |qp_count|qp_index| reserved  |
 *   +-----------------+-----------------+--------+--------+--------+--------+-----------+
 * </pre>
 *
 * A peer reached over several QPs ({@code GDA4J_IBGDA_QPS_PER_PEER}) has {@code qp_count} of these one after the
 * other, {@link #LENGTH} bytes apart ({@link DeviceQp}); its peer entry points at the first, entry {@code i} has
 * {@code qp_index} {@code i}; a kernel posts on the entry of its warp or of the channel it chose.
 *
 * <ul>
 *   <li>{@code sq_buf}, {@code dbrec}, {@code doorbell}, {@code cq_buf}, {@code cq_dbrec}: the QP's rings as the GPU
 *       addresses them ({@code io.gda4j.nic.QpRings}); {@code sq_wqebbs} and {@code cqe_count} are powers of two.</li>
 *   <li>{@code wqe_sizes}: GPU memory, one byte per SQ slot: WQEBBs of the WQE that starts there, written by the
 *       poster, read when that WQE's CQE retires it (a CQE names only the WQE's first WQEBB).</li>
 *   <li>{@code flags}: {@link #FLAG_FLUSH_ON_QUIET} (quiet ends with the PCIe flush on {@code flush_qp}),
 *       {@link #FLAG_RELAXED_ORDERING} (SET signals refused: they could overtake their data).</li>
 *   <li>{@code local_base}/{@code remote_base}: the NIC addresses of this rank's and the peer's heap (a heap offset
 *       {@code o} is {@code local_base + o} in a local data segment, {@code remote_base + o} in a raddr segment);
 *       {@code lkey}/{@code rkey} their keys; {@code heap_size_bytes} bounds both.</li>
 *   <li>{@code flush_qp}: the loopback QP's own DeviceQp (0: none); {@code flush_flag}: NIC address of the 8-byte
 *       GPU word its ATOMIC_FA targets, {@code flush_rkey} that word's rkey. {@code discard_lkey} and
 *       {@code discard_addr}: where fetched values nobody reads go (ADD signals, the flush's atomic): the null MR
 *       (address 0; nothing is written) where the flush is on and the NIC has one, else an 8-byte scratch MR of
 *       the rank.</li>
 *   <li>{@code resv_head}: WQEBBs reserved (atomicAdd); {@code ready_head}: WQEBBs written and published in
 *       reservation order (CAS from the reservation's start to its end); {@code prod_idx}: the producer index last
 *       stored to the doorbell record (raised under {@code db_lock}); {@code fetch_end}: the counter after the last
 *       RDMA READ (or atomic whose fetched value lands in memory), raised with atomicMax: a WQE at or after it carries
 *       the mlx5 fence bit while {@code cons_head} is below it, so it cannot read memory the READ has not yet
 *       filled. On a rank's flush QP only: {@code gets_posted} counts the rank's published gets (a release
 *       atomicAdd after each get's publish) and {@code gets_flushed} the count the last completed flush covered;
 *       quiet flushes only when a get was published since (signals' fetched values are discarded, so only READs
 *       land data a kernel reads).</li>
 *   <li>{@code cons_head}: WQEBBs retired by CQEs (a slot {@code s} may be rewritten once
 *       {@code s < cons_head + sq_wqebbs}); {@code cq_ci}: CQEs consumed; both advanced under {@code poll_lock}.
 *       {@code error}: the QP's first failure, nonzero once an error CQE was seen ({@link #errorWord}) or a post
 *       failed after reserving its slots ({@link #ERROR_POSTING}); the QP is then dead and every later call on it
 *       returns that failure at once.</li>
 * </ul>
 * Counters are free-running 64-bit; the rings use their low bits, the doorbell record their low 16.
 */
public final class DeviceQpDescriptor {
    public static final int SQ_BUF_OFFSET = 0;
    public static final int DBREC_OFFSET = 8;
    public static final int DOORBELL_OFFSET = 16;
    public static final int CQ_BUF_OFFSET = 24;
    public static final int CQ_DBREC_OFFSET = 32;
    public static final int WQE_SIZES_OFFSET = 40;
    public static final int SQ_WQEBBS_OFFSET = 48;
    public static final int CQE_COUNT_OFFSET = 52;
    public static final int QPN_OFFSET = 56;
    public static final int FLAGS_OFFSET = 60;

    public static final int LOCAL_BASE_OFFSET = 64;
    public static final int REMOTE_BASE_OFFSET = 72;
    public static final int HEAP_SIZE_BYTES_OFFSET = 80;
    public static final int LKEY_OFFSET = 88;
    public static final int RKEY_OFFSET = 92;
    public static final int FLUSH_QP_OFFSET = 96;
    public static final int FLUSH_FLAG_OFFSET = 104;
    public static final int FLUSH_RKEY_OFFSET = 112;
    public static final int DISCARD_LKEY_OFFSET = 116;
    public static final int MAX_INLINE_OFFSET = 120;
    public static final int PEER_OFFSET = 124;

    public static final int RESV_HEAD_OFFSET = 128;
    public static final int READY_HEAD_OFFSET = 136;
    public static final int PROD_IDX_OFFSET = 144;
    public static final int DB_LOCK_OFFSET = 152;
    public static final int FETCH_END_OFFSET = 160;
    public static final int GETS_POSTED_OFFSET = 168;
    public static final int GETS_FLUSHED_OFFSET = 176;
    public static final int DISCARD_ADDR_OFFSET = 184;

    public static final int CONS_HEAD_OFFSET = 192;
    public static final int CQ_CI_OFFSET = 200;
    public static final int POLL_LOCK_OFFSET = 208;
    public static final int ERROR_OFFSET = 212;
    public static final int QP_COUNT_OFFSET = 216;
    public static final int QP_INDEX_OFFSET = 220;

    /** Bytes of one DeviceQp; allocate 64-byte aligned (each state line on its own cache line). */
    public static final int LENGTH = 256;
    public static final int ALIGNMENT = 64;

    // flags bit 0 is unused: every doorbell, a UAR's or the emulated NIC's stand-in page, is one st.mmio store.
    /** {@code flags}: quiet ends with the PCIe flush (ATOMIC_FA on {@code flush_qp}, null-MR local SGE). */
    public static final int FLAG_FLUSH_ON_QUIET = 1 << 1;
    /** {@code flags}: the NIC writes with relaxed ordering, so a SET signal (an 8-byte inline WRITE) could overtake
     * the data before it at the target: the device refuses SET signals (SET_SIGNAL_RELAXED); ADD is an atomic. */
    public static final int FLAG_RELAXED_ORDERING = 1 << 2;

    /** {@code error} bit layout: syndrome in bits 0..7, vendor syndrome 8..15, CQE opcode 16..19, bit 31 set. */
    public static final int ERROR_SET = 1 << 31;
    /** {@code error}: with {@link #ERROR_SET}, a post failed after its reservation; the low bits are the
     * {@code ErrorRecordDescriptor.Code} it failed with (SQ_FULL, POST_TIMEOUT). */
    public static final int ERROR_POSTING = 1 << 30;

    private DeviceQpDescriptor() {
    }

    /** The {@code error} word the device stores for an error CQE: never 0, so 0 means "no error". */
    public static int errorWord(int syndrome, int vendorSyndrome, int cqeOpcode) {
        return ERROR_SET | (cqeOpcode & 0xf) << 16 | (vendorSyndrome & 0xff) << 8 | (syndrome & 0xff);
    }
}

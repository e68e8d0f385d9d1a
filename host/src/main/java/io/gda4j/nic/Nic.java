package io.gda4j.nic;

/**
 * A NIC that runs mlx5 work requests: a real ConnectX ({@code Mlx5Nic}, name {@value #MLX5}) or the software model
 * ({@code EmulatedNic}, name {@value #EMULATED}). The IBGDA transport is written against this interface only; both
 * implementations use the byte layouts of {@code io.gda4j.mlx5} for every ring, so the GPU code that posts is the
 * same. Open one with {@link Nics#open}.
 *
 * <p>Lifetime: a NIC owns everything made through it. {@link #close()} destroys, newest first, every QP and
 * deregisters every region still open, then stops whatever the NIC runs (the emulated NIC's engine thread), and is
 * idempotent. Kernels that still post to its QPs must have finished: their doorbells then go nowhere.
 *
 * <p>Threads: set-up methods may be called from any thread and are serialised by the implementation; none of them
 * is meant for a hot path.
 */
public interface Nic extends AutoCloseable {
    /** {@link #name()} of the real mlx5 NIC. */
    String MLX5 = "mlx5";
    /** {@link #name()} of the emulated NIC. */
    String EMULATED = "emulated";

    /** {@value #MLX5} or {@value #EMULATED}: what {@code --nic} takes and what figures are labelled with. */
    String name();

    /**
     * One line for {@code gda4j info} and result tables, e.g. {@code "mlx5_0 port 1 (RoCE, 200 Gb/s)"} or
     * {@code "emulated NIC (software model: engine thread + CUDA copies; not a real network)"}.
     */
    String description();

    /** True for the software model: every figure measured through it must say "emulated NIC". */
    default boolean isEmulated() {
        return EMULATED.equals(name());
    }

    /**
     * What this NIC offers beyond this interface, as {@code type} (the emulated NIC's {@code SoftwareNic}), or empty
     * when it offers no such thing: how code outside the NIC packages reaches an implementation's own API without a
     * cast to the implementation.
     */
    default <T> java.util.Optional<T> facet(Class<T> type) {
        return type.isInstance(this) ? java.util.Optional.of(type.cast(this)) : java.util.Optional.empty();
    }

    /** Limits and properties the transport sizes its QPs by. */
    NicCapabilities capabilities();

    /**
     * Why this NIC cannot keep a QP's rings in GPU memory ({@link RingPlacement#GPU}), or empty when it can; a QP spec
     * asking for them is refused with this reason. None by default.
     */
    default java.util.Optional<String> gpuRingsUnsupportedReason() {
        return java.util.Optional.of(name() + " NICs keep QP rings in host memory only");
    }

    /**
     * Stops executing work rung from now on and waits for what is already queued: the IBGDA transport calls it when
     * a world starts closing, before any heap is freed. Nothing to do for hardware (the default), whose work needs
     * no host thread; the emulated NIC stops its engine and drains its streams.
     */
    default void quiesce() {
    }

    /**
     * Registers memory ({@code ibv_reg_mr}, or {@code ibv_reg_dmabuf_mr} for GPU memory): WQEs may then name
     * addresses in it with its keys, locally (lkey) and from a peer QP on this NIC or its fabric (rkey), within the
     * access granted. Regions may overlap. Throws {@link NicException} with the reason when the NIC cannot reach the
     * memory (e.g. GPU memory without dma-buf or nvidia-peermem support).
     */
    NicMemory registerMemory(MemoryRegistration request);

    /**
     * The null region ({@code ibv_alloc_null_mr}), made on first use and owned by the NIC (closing it does
     * nothing): its lkey in a local data segment makes the NIC drop what it would write there (an atomic's fetched
     * value) without a PCIe write. Throws {@link NicException} when the NIC has none
     * ({@link NicCapabilities#nullMemory()} false).
     */
    NicMemory nullMemory();

    /**
     * Creates an RC QP in {@link QpState#RESET} with a send CQ of its own, rings sized by {@code spec} (at least),
     * in memory the GPU {@code spec.gpu()} can address: the SQ, doorbell record and CQ readable and writable from
     * the GPU and the host, the doorbell register writable from the GPU. The CQ starts with every CQE INVALID and
     * owner bit 0, the doorbell records at zero.
     */
    NicQp createQp(QpSpec spec);

    /**
     * Creates two QPs and connects them to each other: what the IBGDA transport makes for each pair of ranks
     * (first: the QP rank a posts on, second: the one rank b posts on). Both are in {@link QpState#RTS} on return.
     * On failure nothing is left open.
     */
    default QpPair createConnectedPair(QpSpec first, QpSpec second) {
        return QpPair.connect(this, first, this, second);
    }

    /**
     * Creates a QP connected to itself, in {@link QpState#RTS}: the PCIe flush QP (an ATOMIC_FA onto a GPU flag
     * with its local data segment on {@link #nullMemory()}), or local RDMA between two registered regions.
     */
    default NicQp createLoopbackQp(QpSpec spec) {
        NicQp qp = createQp(spec);
        try {
            qp.connect(qp.address());
            return qp;
        } catch (RuntimeException e) {
            qp.close();
            throw e;
        }
    }

    /** Destroys every QP and region made through this NIC, then the NIC itself; idempotent. */
    @Override
    void close();
}

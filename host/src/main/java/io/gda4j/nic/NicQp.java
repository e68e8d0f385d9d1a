package io.gda4j.nic;

/**
 * A reliable-connected queue pair on a {@link Nic}, with its own send CQ. WQEs are written into its send queue by
 * exactly one poster: a GPU (through {@code io.gda4j.ibgda.DeviceQp} and {@code gda4j/transport/ibgda/qp.cuh}) or the
 * host (through {@link #hostPoster()}), never both, because the poster owns the producer and consumer counters.
 *
 * <p>Completion contract, identical on both NICs: WQEs run in posting order; each WQE whose ctrl segment asks for a
 * CQE ({@code FM_CE_SE_CQ_UPDATE}) gets one, in order, in the send CQ. The first failing WQE gets an error CQE
 * ({@code REQ_ERR}, syndrome from {@code io.gda4j.mlx5.CqeSyndrome}) whether it asked for one or not; the QP then
 * goes to {@link QpState#ERROR} and every later WQE gets a {@code WR_FLUSH} error CQE without running. A request the
 * responder refuses (remote access, invalid request) moves the responder's QP to ERROR too. A CQE says the responder
 * took the data, not that it is visible in the target's memory yet (see {@link NicCapabilities#writesMayPassCqe()}).
 */
public interface NicQp extends AutoCloseable {
    /** 24-bit QP number. */
    int qpn();

    /** The label it was created with, e.g. {@code "rank 0 -> rank 1"}. */
    String label();

    /** The NIC it belongs to. */
    Nic nic();

    /** What a peer needs to connect to this QP. */
    QpAddress address();

    /**
     * Moves the QP from RESET through INIT and RTR to RTS, connected to {@code peer} (which may be this QP's own
     * address: a loopback QP).
     * The peer must connect back to this QP's address before WQEs flow (real RC needs both sides; the emulated NIC
     * needs the peer's registration table only). Throws {@link NicException} when the address is not reachable.
     */
    void connect(QpAddress peer);

    /** The current state; the emulated NIC's engine and a real NIC's error CQEs move it to ERROR. */
    QpState state();

    /** The rings as the GPU that was named in {@link QpSpec#gpu()} addresses them. */
    QpRings deviceRings();

    /**
     * The rings as this process's threads address them (same memory as {@link #deviceRings()}); throws
     * {@link IllegalStateException} for a QP whose rings are in GPU memory ({@link RingPlacement#GPU}), on which only
     * its GPU posts.
     */
    QpRings hostRings();

    /**
     * A host-side poster; the QP then must not be posted to from a GPU. By default a {@link RingPoster} over
     * {@link #hostRings()}; a real mlx5 QP posts through libibverbs.
     */
    default HostPoster hostPoster() {
        return new RingPoster(this);
    }

    /** Destroys the QP and its CQ; idempotent. WQEs still in flight are abandoned (their CQEs never come). */
    @Override
    void close();
}

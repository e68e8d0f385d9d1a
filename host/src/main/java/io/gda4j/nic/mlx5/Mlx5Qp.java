package io.gda4j.nic.mlx5;

import com.sun.jna.Pointer;

import io.gda4j.cuda.CudaContext;
import io.gda4j.mlx5.CqDoorbellRecordDescriptor;
import io.gda4j.mlx5.CqeDescriptor;
import io.gda4j.mlx5.CqeOpcode;
import io.gda4j.nic.HostPoster;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpAddress;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.QpState;
import io.gda4j.nic.RingPlacement;
import io.gda4j.verbs.CompletionQueue;
import io.gda4j.verbs.Mlx5CqBuffers;
import io.gda4j.verbs.Mlx5QpBuffers;
import io.gda4j.verbs.QueuePair;
import io.gda4j.verbs.QueuePairCapabilities;
import io.gda4j.verbs.SendQueue;
import io.gda4j.verbs.VerbsException;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * An RC queue pair of an {@link Mlx5Nic}: an {@code ibv_qp} with a CQ of its own (send and receive CQ; gda4j posts
 * no receives), whose send queue, doorbell record, CQ and doorbell register libmlx5 allocated and
 * {@code mlx5dv_init_obj} exposes. When the spec names a GPU, those pages are mapped into it
 * ({@link CudaHostMappings}) and {@link #deviceRings()} gives their GPU addresses; with {@code QpSpec.gpu() == null}
 * the QP is for host posting only.
 *
 * <p>The QP is created with {@code sq_sig_all = 0} (a WQE asks for its CQE), which also keeps the kernel from
 * enabling requester scatter-to-CQE ({@code configure_requester_scat_cqe} does so only for signal-all QPs or on
 * request): small RDMA READ results always land in their data segment's buffer, where the GPU looks for them.
 */
final class Mlx5Qp implements NicQp {
    /** Attempts at sizing the queues before giving up ({@link Mlx5QueueSizing#next}). */
    static final int SIZING_ATTEMPTS = 3;

    private final Mlx5Nic nic;
    private final QpSpec spec;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final QpRings hostRings;
    private final QpRings deviceRings;
    private final List<CudaHostMappings.Mapping> mappings;
    private final ByteBuffer cqView;
    private final ByteBuffer cqDbrecView;
    private final int psn;
    private QpState state = QpState.RESET;
    private volatile boolean closed;
    private QpAddress peer;

    private Mlx5Qp(Mlx5Nic nic, QpSpec spec, CompletionQueue cq, QueuePair qp, QpRings hostRings,
                   QpRings deviceRings, List<CudaHostMappings.Mapping> mappings) {
        this.nic = nic;
        this.spec = spec;
        this.cq = cq;
        this.qp = qp;
        this.hostRings = hostRings;
        this.deviceRings = deviceRings;
        this.mappings = mappings;
        this.cqView = new Pointer(hostRings.cqBuf()).getByteBuffer(0,
                (long) hostRings.cqeCount() * CqeDescriptor.CQE_SIZE);
        this.cqDbrecView = new Pointer(hostRings.cqDbrec()).getByteBuffer(0, CqDoorbellRecordDescriptor.SIZE);
        this.psn = ThreadLocalRandom.current().nextInt(1 << 24);
    }

    /** Creates the CQ and QP, sized to the spec, and maps their rings into the spec's GPU. */
    static Mlx5Qp create(Mlx5Nic nic, QpSpec spec) {
        if (spec.rings() == RingPlacement.GPU) {
            throw new NicException(spec.label() + ": rings in GPU memory on " + nic.deviceName() + ": "
                    + nic.gpuRingsUnsupportedReason().orElse("not built for this NIC"));
        }
        Mlx5QueueSizing.Attempt attempt = Mlx5QueueSizing.first(spec.sqWqebbs(), spec.cqEntries(),
                spec.maxInlineBytes());
        for (int i = 1; ; i++) {
            CompletionQueue cq = null;
            QueuePair qp = null;
            try {
                cq = nic.context().createCompletionQueue(Mlx5QueueSizing.cqRequest(attempt.cqEntries()));
                qp = nic.protectionDomain().createQueuePair(cq, cq,
                        QueuePairCapabilities.sendOnly(attempt.maxSendWr(), spec.maxInlineBytes()));
                Mlx5QpBuffers qpBuffers = qp.mlx5Buffers();
                Mlx5CqBuffers cqBuffers = cq.mlx5Buffers();
                Mlx5QueueSizing.Attempt next = Mlx5QueueSizing.next(attempt, spec.sqWqebbs(), spec.cqEntries(),
                        qpBuffers.sqWqeCnt(), cqBuffers.cqeCnt());
                if (next == null) {
                    return mapped(nic, spec, cq, qp, qpBuffers, cqBuffers);
                }
                if (i == SIZING_ATTEMPTS) {
                    throw new NicException(String.format("%s: asked for a send queue of %d WQEBBs and a CQ of %d,"
                                    + " libmlx5 granted %d WQEBBs (for %d WRs) and %d CQEs after %d attempts; its"
                                    + " WQE-size formula differs from Mlx5QueueSizing's", spec.label(),
                            spec.sqWqebbs(), spec.cqEntries(), qpBuffers.sqWqeCnt(), attempt.maxSendWr(),
                            cqBuffers.cqeCnt(), i));
                }
                attempt = next;
                closeQuietly(qp, cq);
            } catch (VerbsException e) {
                closeQuietly(qp, cq);
                throw new NicException(spec.label() + ": cannot create an RC QP on " + nic.deviceName() + ": "
                        + e.getMessage(), e);
            } catch (RuntimeException e) {
                closeQuietly(qp, cq);
                throw e;
            }
        }
    }

    private static Mlx5Qp mapped(Mlx5Nic nic, QpSpec spec, CompletionQueue cq, QueuePair qp,
                                 Mlx5QpBuffers qpBuffers, Mlx5CqBuffers cqBuffers) {
        QpRings host = Mlx5Rings.hostRings(qp.qpNumber(), qpBuffers, cqBuffers,
                qp.capabilities().maxInlineData(), spec.label());
        CudaContext gpu = spec.gpu();
        if (gpu == null) {
            return new Mlx5Qp(nic, spec, cq, qp, host, null, List.of());
        }
        List<CudaHostMappings.Mapping> mappings = new ArrayList<>();
        try {
            for (Mlx5Rings.Region r : Mlx5Rings.regions(host)) {
                mappings.add(CudaHostMappings.PROCESS.acquire(gpu, r.what() + " of " + spec.label(),
                        r.pages(nic.pageSize()), r.ioMemory()));
            }
            QpRings device = Mlx5Rings.deviceRings(host, address -> {
                for (CudaHostMappings.Mapping m : mappings) {
                    if (m.pages().contains(address)) {
                        return CudaHostMappings.PROCESS.deviceAddress(gpu, m, address);
                    }
                }
                throw new IllegalStateException(String.format("0x%x is in no mapping", address));
            });
            return new Mlx5Qp(nic, spec, cq, qp, host, device, List.copyOf(mappings));
        } catch (RuntimeException e) {
            for (int i = mappings.size() - 1; i >= 0; i--) {
                try {
                    CudaHostMappings.PROCESS.release(mappings.get(i));
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    @Override
    public int qpn() {
        return hostRings.qpn();
    }

    @Override
    public String label() {
        return spec.label();
    }

    @Override
    public Nic nic() {
        return nic;
    }

    /** The verbs QP, for tests and diagnostics. */
    QueuePair queuePair() {
        return qp;
    }

    @Override
    public QpAddress address() {
        return nic.addressOf(qpn(), psn);
    }

    @Override
    public synchronized void connect(QpAddress peer) {
        requireOpen();
        if (state != QpState.RESET) {
            throw new NicException(String.format("%s (QP 0x%06x) is already connected to %s; gda4j QPs connect"
                    + " once", label(), qpn(), this.peer));
        }
        if (peer.device().startsWith(Nic.EMULATED)) {
            throw new NicException(String.format("%s (QP 0x%06x on %s) cannot connect to %s: that is a QP of the"
                    + " emulated NIC; both sides of a pair must use the same kind of NIC", label(), qpn(),
                    nic.deviceName(), peer));
        }
        nic.connect(this, peer, psn);
        this.peer = peer;
        state = QpState.RTS;
    }

    /**
     * RESET until connected, then RTS until an error CQE is seen in the CQ (sticky: ERROR). The ring is looked at
     * around the consumer index the poster last published (the CQEs at {@code ci - 1} and {@code ci}): once a WQE
     * fails, every later CQE of the QP is an error (WR_FLUSH), so an error there means the QP is in the error
     * state. Cheap enough for a host poster, which asks before each post; synchronized with {@link #close()}
     * so that it never reads a CQ that libmlx5 has freed.
     */
    @Override
    public synchronized QpState state() {
        QpState s = state;
        if (s != QpState.RTS || closed) {
            return s;
        }
        int ci = CqDoorbellRecordDescriptor.getConsumerIndexAcquire(cqDbrecView, 0);
        if (errorObserved(cqView, hostRings.cqeCount(), ci)) {
            state = QpState.ERROR;
            return QpState.ERROR;
        }
        return QpState.RTS;
    }

    /**
     * Whether the CQE just before or at consumer index {@code ci} (24 bits, as the CQ doorbell record holds it) is
     * an error CQE.
     */
    static boolean errorObserved(ByteBuffer cq, int cqeCount, int ci) {
        for (int index : new int[] {ci - 1, ci}) {
            int opOwn = cq.get(CqeDescriptor.cqeOffset(index, cqeCount) + CqeDescriptor.OP_OWN_OFFSET);
            if (CqeOpcode.isError(CqeDescriptor.opcodeOf(opOwn))) {
                return true;
            }
        }
        return false;
    }

    @Override
    public QpRings deviceRings() {
        requireOpen();
        if (deviceRings == null) {
            throw new IllegalStateException(label() + " was created without a GPU (QpSpec.gpu() is null): its"
                    + " rings are mapped into no GPU, only hostRings() and hostPoster() work");
        }
        return deviceRings;
    }

    @Override
    public QpRings hostRings() {
        requireOpen();
        return hostRings;
    }

    /**
     * Host posting through libibverbs ({@link VerbsPoster}): the provider writes the WQEs and rings the
     * write-combining doorbell with rdma-core's barriers, which the JVM cannot emit on every CPU.
     */
    @Override
    public HostPoster hostPoster() {
        requireOpen();
        return new VerbsPoster(this, new SendQueue(qp.handle(), cq.handle(), hostRings.sqWqebbs(),
                hostRings.maxInlineBytes()), qp.capabilities().maxSendWr(), hostRings.maxInlineBytes());
    }

    /**
     * Unmaps the rings from the GPU (before libmlx5 frees them), then destroys the QP and its CQ. Idempotent; a
     * failure is reported after everything else was attempted.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        for (int i = mappings.size() - 1; i >= 0; i--) {
            try {
                CudaHostMappings.PROCESS.release(mappings.get(i));
            } catch (RuntimeException e) {
                failure = accumulate(failure, e);
            }
        }
        try {
            qp.close();
        } catch (RuntimeException e) {
            failure = accumulate(failure, e);
        }
        try {
            cq.close();
        } catch (RuntimeException e) {
            failure = accumulate(failure, e);
        }
        nic.forget(this);
        if (failure != null) {
            throw failure instanceof NicException ? failure
                    : new NicException(label() + ": closing QP 0x" + Integer.toHexString(qpn()) + " failed: "
                    + failure.getMessage(), failure);
        }
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return String.format("%s (QP 0x%06x on %s, SQ %d WQEBBs, CQ %d, %s)", label(), qpn(), nic.deviceName(),
                hostRings.sqWqebbs(), hostRings.cqeCount(), deviceRings == null ? "host only"
                        : "mapped into " + spec.gpu().device());
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException(label() + " (QP 0x" + Integer.toHexString(qpn()) + ") is closed");
        }
    }

    private static void closeQuietly(QueuePair qp, CompletionQueue cq) {
        try {
            if (qp != null) {
                qp.close();
            }
        } catch (RuntimeException e) {
            // the creation failure is what the caller needs to see
        }
        try {
            if (cq != null) {
                cq.close();
            }
        } catch (RuntimeException e) {
            // as above
        }
    }

    private static RuntimeException accumulate(RuntimeException failure, RuntimeException next) {
        if (failure == null) {
            return next;
        }
        failure.addSuppressed(next);
        return failure;
    }
}

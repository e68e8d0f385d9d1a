package io.gda4j.nic.mlx5;

import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicCapabilities;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicOptions;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpAddress;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.topology.NicPlacement;
import io.gda4j.verbs.CompletionQueue;
import io.gda4j.verbs.DeviceAttributes;
import io.gda4j.verbs.Gid;
import io.gda4j.verbs.LibIbverbs;
import io.gda4j.verbs.LibMlx5;
import io.gda4j.verbs.MemoryRegion;
import io.gda4j.verbs.PortAttributes;
import io.gda4j.verbs.ProtectionDomain;
import io.gda4j.verbs.QueuePair;
import io.gda4j.verbs.QueuePairCapabilities;
import io.gda4j.verbs.RcConnectOptions;
import io.gda4j.verbs.RcPeer;
import io.gda4j.verbs.RdmaContext;
import io.gda4j.verbs.Verbs;
import io.gda4j.verbs.VerbsConstants;
import io.gda4j.verbs.VerbsException;
import io.gda4j.verbs.VerbsStatus;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The real NIC: one port of a ConnectX (mlx5) device driven through {@code io.gda4j.verbs}, with RC queue pairs
 * whose rings libmlx5 allocates and {@code mlx5dv_init_obj} exposes, mapped into the posting GPU
 * ({@link Mlx5Qp}). What it needs on a machine:
 * <ul>
 *   <li>rdma-core (libibverbs, libmlx5) and an active port: {@link #open} says which is missing;</li>
 *   <li>for GPU memory: dma-buf or nvidia-peermem ({@link GpuMemoryRegistrar});</li>
 *   <li>for GPU posting: the UAR page mapped with {@code cuMemHostRegister(IOMEMORY)}, which needs root or the
 *       NVIDIA driver option {@code PeerMappingOverride=1} ({@link CudaHostMappings}).</li>
 * </ul>
 * QPs are connected with the peer's QPN, LID (InfiniBand) or GID (RoCE) and PSN; the local GID is chosen by
 * {@link GidSelection}, the path MTU is the port's active MTU capped by {@link Mlx5Settings#maxPathMtu()}.
 *
 * <p>Threads: set-up methods are synchronized; closing snapshots what is open and closes it outside the lock, so a
 * QP closing itself on another thread cannot deadlock with the NIC.
 */
public final class Mlx5Nic implements Nic {
    /** Start of every "no device" message of {@link #open}; the rest is {@code Verbs.status().sentence()}. */
    static final String CANNOT_OPEN = "cannot open the mlx5 NIC: ";
    /** Outstanding RDMA READs/atomics per QP in either direction, capped by the device's limits. */
    static final int RD_ATOMIC_DEFAULT = 16;
    /** GID table entries read at most (RoCE tables have 128 or 256). */
    static final int GID_TABLE_LIMIT = 256;

    private final RdmaContext context;
    private final ProtectionDomain pd;
    private final DeviceAttributes device;
    private final PortAttributes port;
    private final int portNum;
    private final GidSelection.GidChoice gid;
    private final Mlx5Settings settings;
    private final int pageSize;
    private final NicCapabilities capabilities;
    private final String description;
    private final List<Mlx5Qp> qps = new ArrayList<>();
    private final List<Mlx5Memory> memories = new ArrayList<>();
    private Mlx5Memory nullMemory;
    private boolean closed;

    private Mlx5Nic(RdmaContext context, NicOptions options, Mlx5Settings settings) {
        this.context = context;
        this.settings = settings;
        this.device = context.queryDevice();
        this.portNum = options.portNum();
        if (portNum < 1 || portNum > device.physPortCount()) {
            throw new NicException(String.format("%s has port%s 1%s, not port %d: set NicOptions.portNum",
                    context.deviceName(), device.physPortCount() == 1 ? "" : "s",
                    device.physPortCount() == 1 ? "" : ".." + device.physPortCount(), portNum));
        }
        this.port = context.queryPort(portNum);
        if (!port.isActive()) {
            throw new NicException(String.format("port %d of %s is %s, not ACTIVE: check the link (ibstat,"
                            + " ip link) and, on InfiniBand, that a subnet manager runs", portNum,
                    context.deviceName(), VerbsConstants.portStateName(port.state())));
        }
        this.gid = chooseGid(settings.gidIndexFor(options));
        this.pd = context.allocateProtectionDomain();
        this.pageSize = LibC.pageSize();
        int maxSq = Integer.highestOneBit(Math.max(1, Math.min(device.maxQpWr(), 1 << 15)));
        boolean nullMr = LibIbverbs.nullMrUnsupportedReason(context.handle()) == null;
        // writesMayPassCqe: the CQ is in host memory and GPUDirect data in GPU memory, two PCIe paths; only the
        // null-MR flush orders them (a non-posted atomic cannot pass earlier posted writes: docs/ARCHITECTURE.md).
        this.capabilities = new NicCapabilities(maxSq, device.maxCqe(), probeMaxInline(), device.atomicCap() != 0,
                nullMr, true, settings.relaxedOrdering(), true, false);
        this.description = describe(context.deviceName(), portNum, port.isEthernet(),
                port.isEthernet() ? gid.reason() : String.format("LID 0x%x", port.lid()), port.activeWidth(),
                port.activeSpeed());
    }

    /**
     * Opens the device {@code options.deviceName()} (the first one listed when null or empty) with this process's
     * {@link Mlx5Settings}.
     *
     * @throws NicException saying what is missing: rdma-core, a device, libmlx5, an active port, a usable GID
     */
    public static Mlx5Nic open(NicOptions options) {
        return open(options, Mlx5Settings.resolve());
    }

    static Mlx5Nic open(NicOptions options, Mlx5Settings settings) {
        VerbsStatus status = Verbs.status();
        if (status.kind() != VerbsStatus.Kind.DEVICES_FOUND) {
            throw new NicException(CANNOT_OPEN + status.sentence());
        }
        if (!LibMlx5.isAvailable()) {
            throw new NicException(CANNOT_OPEN + LibMlx5.libraryName() + " is not usable ("
                    + LibMlx5.unavailableReason() + "): install rdma-core's mlx5 provider (ibverbs-providers)");
        }
        String name = options.deviceName();
        RdmaContext context;
        try {
            context = name == null || name.isBlank() ? RdmaContext.openFirst() : RdmaContext.open(name.strip());
        } catch (VerbsException e) {
            throw new NicException(CANNOT_OPEN + e.getMessage(), e);
        }
        try {
            return new Mlx5Nic(context, options, settings);
        } catch (RuntimeException e) {
            try {
                context.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            if (e instanceof NicException) {
                throw e;
            }
            throw new NicException(CANNOT_OPEN + context.deviceName() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String name() {
        return MLX5;
    }

    @Override
    public String description() {
        return description;
    }

    /**
     * Not yet on a real ConnectX: the DEVX commands that make a CQ and a QP over GPU umems are built and held to
     * rdma-core's macros byte for byte ({@code io.gda4j.mlx5.DevxCommands}), but nothing creates such QPs here yet.
     */
    @Override
    public java.util.Optional<String> gpuRingsUnsupportedReason() {
        return java.util.Optional.of("gda4j creates mlx5 QPs through libibverbs, whose rings are host memory; the DEVX"
                + " path that puts them in GPU memory (io.gda4j.mlx5.DevxCommands, checked byte for byte) is not wired"
                + " to a real NIC yet");
    }

    @Override
    public NicCapabilities capabilities() {
        return capabilities;
    }

    /** The RDMA device, e.g. {@code mlx5_0}. */
    public String deviceName() {
        return context.deviceName();
    }

    public int portNum() {
        return portNum;
    }

    public Mlx5Settings settings() {
        return settings;
    }

    /** The GID index QPs use as {@code sgid_index} (RoCE), and why it was chosen. */
    public String gidChoice() {
        return gid.reason();
    }

    RdmaContext context() {
        return context;
    }

    ProtectionDomain protectionDomain() {
        return pd;
    }

    int pageSize() {
        return pageSize;
    }

    @Override
    public synchronized NicMemory registerMemory(MemoryRegistration request) {
        requireOpen();
        int access = accessFlags(request.access(), settings.relaxedOrdering());
        MemoryRegion mr;
        try {
            mr = switch (request.kind()) {
                case DEVICE -> GpuMemoryRegistrar.register(pd, request, access, settings.dmabuf(), pageSize);
                case HOST_MAPPED -> pd.registerHostMemory(request.address(), request.lengthBytes(), access);
            };
        } catch (VerbsException e) {
            throw new NicException(request.label() + ": " + e.getMessage(), e);
        }
        // The region says what it was registered with: a poster asks the target's region, not its own NIC, whether a
        // SET signal could overtake its data.
        Set<NicAccess> registered = EnumSet.copyOf(request.access());
        if (settings.relaxedOrdering()) {
            registered.add(NicAccess.RELAXED_ORDERING);
        }
        Mlx5Memory memory = new Mlx5Memory(this, mr, request.address(), request.lengthBytes(), registered,
                request.label(), false);
        memories.add(memory);
        return memory;
    }

    /**
     * The {@code IBV_ACCESS_*} word for {@code access}. Verbs refuses remote write or atomic access without local
     * write (EINVAL), so it is added; relaxed ordering is added when the settings ask for it.
     */
    static int accessFlags(Set<NicAccess> access, boolean relaxedOrdering) {
        int flags = NicAccess.flags(access);
        if ((flags & (VerbsConstants.IBV_ACCESS_REMOTE_WRITE | VerbsConstants.IBV_ACCESS_REMOTE_ATOMIC)) != 0) {
            flags |= VerbsConstants.IBV_ACCESS_LOCAL_WRITE;
        }
        return relaxedOrdering ? flags | VerbsConstants.IBV_ACCESS_RELAXED_ORDERING : flags;
    }

    @Override
    public synchronized NicMemory nullMemory() {
        requireOpen();
        if (nullMemory == null) {
            if (!capabilities.nullMemory()) {
                throw new NicException(deviceName() + " has no null MR (ibv_alloc_null_mr): "
                        + LibIbverbs.nullMrUnsupportedReason(context.handle()));
            }
            MemoryRegion mr;
            try {
                mr = pd.allocateNullMemoryRegion();
            } catch (VerbsException e) {
                throw new NicException(e.getMessage(), e);
            }
            nullMemory = new Mlx5Memory(this, mr, 0, 0, Set.of(), "null MR of " + deviceName(), true);
        }
        return nullMemory;
    }

    @Override
    public synchronized NicQp createQp(QpSpec spec) {
        requireOpen();
        if (spec.sqWqebbs() > capabilities.maxSqWqebbs()) {
            throw new NicException(String.format("%s: a send queue of %d WQEBBs exceeds %s's %d", spec.label(),
                    spec.sqWqebbs(), deviceName(), capabilities.maxSqWqebbs()));
        }
        if (spec.cqEntries() > capabilities.maxCqEntries()) {
            throw new NicException(String.format("%s: a CQ of %d entries exceeds %s's max_cqe %d", spec.label(),
                    spec.cqEntries(), deviceName(), capabilities.maxCqEntries()));
        }
        if (spec.maxInlineBytes() > capabilities.maxInlineBytes()) {
            throw new NicException(String.format("%s: %d bytes inline exceed the %d an RC QP of %s can take",
                    spec.label(), spec.maxInlineBytes(), capabilities.maxInlineBytes(), deviceName()));
        }
        Mlx5Qp qp = Mlx5Qp.create(this, spec);
        qps.add(qp);
        return qp;
    }

    /**
     * What a peer needs to reach QP {@code qpn}: LID on InfiniBand, the chosen GID on RoCE, and the largest path MTU
     * this side takes (the port's active MTU capped by {@link Mlx5Settings#maxPathMtu()}).
     */
    QpAddress addressOf(int qpn, int psn) {
        return new QpAddress(deviceName(), portNum, port.linkLayer(), qpn, psn, port.lid(),
                port.isEthernet() ? gid.gid() : Gid.zero(), Math.min(port.activeMtu(), settings.maxPathMtu()));
    }

    /** Brings {@code qp} from RESET to RTS towards {@code peer}. */
    void connect(Mlx5Qp qp, QpAddress peer, int localPsn) {
        String what = String.format("%s: cannot connect QP 0x%06x on %s port %d to %s", qp.label(), qp.qpn(),
                deviceName(), portNum, peer.describe());
        RtrPath path;
        try {
            path = rtrPath(port.linkLayer(), connectOptions(), peer);
        } catch (IllegalArgumentException e) {
            throw new NicException(what + ": " + e.getMessage(), e);
        }
        try {
            qp.queuePair().connect(path.peer(), localPsn, path.options());
        } catch (VerbsException | IllegalStateException | IllegalArgumentException e) {
            throw new NicException(what + ": " + e.getMessage(), e);
        }
    }

    /**
     * What INIT to RTR is given towards {@code peer}: the peer's QPN, PSN, LID and GID as it published them (the GID
     * only on RoCE: on InfiniBand a zero GID means no GRH), and this side's options with the path MTU lowered to the
     * peer's where that is smaller (a path MTU above either port's active MTU fails the transition, or drops packets).
     *
     * @param linkLayer this port's {@code IBV_LINK_LAYER_*}
     * @throws IllegalArgumentException saying why this port cannot reach that endpoint
     */
    static RtrPath rtrPath(int linkLayer, RcConnectOptions local, QpAddress peer) {
        boolean ethernet = linkLayer == VerbsConstants.IBV_LINK_LAYER_ETHERNET;
        if (peer.linkLayer() != VerbsConstants.IBV_LINK_LAYER_UNSPECIFIED && peer.linkLayer() != linkLayer) {
            throw new IllegalArgumentException("the peer's port is " + VerbsConstants.linkLayerName(peer.linkLayer())
                    + " and this one " + VerbsConstants.linkLayerName(linkLayer) + "; an RC connection needs the same"
                    + " link layer on both sides: choose ports of one fabric on every host ("
                    + NicPlacement.NIC_DEVICE_ENV + ")");
        }
        if (ethernet && peer.gid().isZero()) {
            throw new IllegalArgumentException("the port is RoCE and the peer's address has no GID; its side must"
                    + " be an mlx5 NIC on RoCE too");
        }
        if (!ethernet && peer.lid() == 0) {
            throw new IllegalArgumentException("the port is InfiniBand and the peer's address has LID 0; is a"
                    + " subnet manager (opensm) running?");
        }
        int mtu = peer.pathMtu() == 0 ? local.pathMtu() : Math.min(local.pathMtu(), peer.pathMtu());
        return new RtrPath(new RcPeer(peer.qpn(), peer.lid(), ethernet ? peer.gid() : Gid.zero(), peer.psn()),
                local.withPathMtu(mtu));
    }

    /** What {@link QueuePair#toRtr} takes towards one peer ({@link #rtrPath}). */
    record RtrPath(RcPeer peer, RcConnectOptions options) {
    }

    /** The local side of every connection: this port, its GID, its MTU (capped), every access, the rd_atom limits. */
    RcConnectOptions connectOptions() {
        int access = VerbsConstants.IBV_ACCESS_LOCAL_WRITE | VerbsConstants.IBV_ACCESS_REMOTE_WRITE
                | VerbsConstants.IBV_ACCESS_REMOTE_READ
                | (capabilities.atomics() ? VerbsConstants.IBV_ACCESS_REMOTE_ATOMIC : 0);
        int rdAtomic = Math.max(1, Math.min(RD_ATOMIC_DEFAULT, Math.min(device.maxQpRdAtom(),
                device.maxQpInitRdAtom())));
        return RcConnectOptions.defaults().withPort(portNum)
                .withPathMtu(Math.min(port.activeMtu(), settings.maxPathMtu()))
                .withSgidIndex(port.isEthernet() ? gid.index() : 0).withAccessFlags(access).withRdAtomic(rdAtomic);
    }

    /** Destroys every QP (newest first), deregisters every region and the null MR, then closes the device. */
    @Override
    public void close() {
        List<Mlx5Qp> openQps;
        List<Mlx5Memory> openMemories;
        Mlx5Memory openNull;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            openQps = new ArrayList<>(qps);
            openMemories = new ArrayList<>(memories);
            openNull = nullMemory;
        }
        RuntimeException failure = null;
        for (int i = openQps.size() - 1; i >= 0; i--) {
            try {
                openQps.get(i).close();
            } catch (RuntimeException e) {
                failure = accumulate(failure, e);
            }
        }
        for (int i = openMemories.size() - 1; i >= 0; i--) {
            try {
                openMemories.get(i).closeRegion();
            } catch (RuntimeException e) {
                failure = accumulate(failure, e);
            }
        }
        try {
            if (openNull != null) {
                openNull.closeRegion();
            }
            context.close();
        } catch (RuntimeException e) {
            failure = accumulate(failure, e);
        }
        if (failure != null) {
            throw failure instanceof NicException ? failure
                    : new NicException("closing " + deviceName() + " failed: " + failure.getMessage(), failure);
        }
    }

    synchronized void forget(Mlx5Qp qp) {
        qps.remove(qp);
    }

    synchronized void forget(Mlx5Memory memory) {
        memories.remove(memory);
    }

    @Override
    public String toString() {
        return "Mlx5Nic[" + description + "]";
    }

    private synchronized void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the mlx5 NIC " + deviceName() + " is closed");
        }
    }

    private GidSelection.GidChoice chooseGid(int configured) {
        String where = String.format("port %d of %s", portNum, context.deviceName());
        if (!port.isEthernet()) {
            int index = configured == Mlx5Settings.GID_AUTO ? 0 : configured;
            return new GidSelection.GidChoice(index, context.queryGid(portNum, index), "InfiniBand: LID 0x"
                    + Integer.toHexString(port.lid()) + " addresses the port; GID index " + index + " (no GRH)");
        }
        List<GidSelection.GidEntry> table = new ArrayList<>();
        int length = Math.min(port.gidTableLength(), GID_TABLE_LIMIT);
        for (int i = 0; i < length; i++) {
            Gid g;
            try {
                g = context.queryGid(portNum, i);
            } catch (VerbsException e) {
                continue; // an empty entry on some kernels
            }
            if (!g.isZero()) {
                table.add(new GidSelection.GidEntry(i, g, GidSelection.sysfsType(GidSelection.SYSFS_INFINIBAND,
                        context.deviceName(), portNum, i)));
            }
        }
        return GidSelection.chooseRoce(table, configured, where);
    }

    /**
     * The largest inline payload an RC QP of this device accepts: a throwaway QP is asked for the most each
     * ConnectX descriptor size allows ({@link Mlx5QueueSizing#DESCRIPTOR_SIZES}) until one is created; libmlx5
     * reports what it granted. Also proves early that RC QPs can be made at all.
     */
    private int probeMaxInline() {
        CompletionQueue cq = context.createCompletionQueue(1);
        VerbsException last = null;
        try {
            for (int descriptor : Mlx5QueueSizing.DESCRIPTOR_SIZES) {
                try (QueuePair probe = pd.createQueuePair(cq, cq,
                        QueuePairCapabilities.sendOnly(1, Mlx5QueueSizing.maxInlineFor(descriptor)))) {
                    return probe.capabilities().maxInlineData();
                } catch (VerbsException e) {
                    last = e;
                }
            }
        } finally {
            cq.close();
        }
        throw new NicException("cannot create an RC QP on " + deviceName() + ": " + last.getMessage(), last);
    }

    /** "mlx5_0 port 1 (RoCE, GID index 3 ..., 200 Gb/s)". */
    static String describe(String device, int portNum, boolean ethernet, String address, int activeWidth,
                           int activeSpeed) {
        double gbps = linkGbps(activeWidth, activeSpeed);
        return String.format("%s port %d (%s, %s%s)", device, portNum, ethernet ? "RoCE" : "InfiniBand", address,
                gbps > 0 ? String.format(", %s Gb/s", gbps == Math.rint(gbps) ? Long.toString((long) gbps)
                        : Double.toString(gbps)) : "");
    }

    /**
     * The nominal link rate from {@code ibv_port_attr.active_width} (1 = 1x, 2 = 4x, 4 = 8x, 8 = 12x, 16 = 2x) and
     * {@code active_speed} (1 SDR 2.5, 2 DDR 5, 4 QDR 10, 8 FDR10 10, 16 FDR 14, 32 EDR 25, 64 HDR 50, 128 NDR 100
     * Gb/s a lane); 0 when either code is unknown. mlx5 reports RoCE ports the same way (4x EDR = 100 GbE).
     */
    static double linkGbps(int activeWidth, int activeSpeed) {
        int lanes = switch (activeWidth) {
            case 1 -> 1;
            case 2 -> 4;
            case 4 -> 8;
            case 8 -> 12;
            case 16 -> 2;
            default -> 0;
        };
        double perLane = switch (activeSpeed) {
            case 1 -> 2.5;
            case 2 -> 5;
            case 4, 8 -> 10;
            case 16 -> 14;
            case 32 -> 25;
            case 64 -> 50;
            case 128 -> 100;
            default -> 0;
        };
        return lanes * perLane;
    }

    private static RuntimeException accumulate(RuntimeException failure, RuntimeException next) {
        if (failure == null) {
            return next;
        }
        failure.addSuppressed(next);
        return failure;
    }
}

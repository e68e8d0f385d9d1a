package io.gda4j.proxy;

import static io.gda4j.proxy.TriggerFifoDescriptor.CHANNEL_CAPACITY_LOG2_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.CHANNEL_CAPACITY_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.CHANNEL_CONTROL_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.CHANNEL_DONE_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.CHANNEL_HEAD_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.CHANNEL_LENGTH;
import static io.gda4j.proxy.TriggerFifoDescriptor.CHANNEL_PEER_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.CHANNEL_RANK_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.CHANNEL_RING_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.RING_OFFSET;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaException;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.Driver;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.cuda.MutableDevicePointer;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicUser;
import io.gda4j.transport.HostTransfers;
import io.gda4j.transport.LinkEnd;
import io.gda4j.transport.LinkHealth;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.RemotePeer;
import io.gda4j.transport.Transport;
import io.gda4j.world.ErrorRecordDescriptor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The proxy link from one rank to a peer (a PortChannel): the trigger FIFO in pinned host memory mapped into the
 * rank's GPU, the device-side channel object the rank's device view points at, the CUDA stream(s) the copy engine
 * handler drives, and the registration with the world's {@link ProxyService}. Owned by the rank's {@link PeerLink};
 * closing it drains the channel (see {@link ProxyService#remove}) and frees everything, newest first. It also offers
 * the transfers the host queues itself ({@link HostTransfers}: {@link CopyEngineTransfers} beside the copy engine
 * handler, {@link VerbsTransfers} beside the verbs handler), which need no trigger.
 */
public final class ProxyChannel implements AutoCloseable, LinkHealth, NicUser, HostTransfers {
    private final String name;
    private final PeerSide peer;
    private final ProxyService service;
    private final boolean peerStreamSignals;
    private final String handlerLabel;
    /** The verbs handler's NIC, or null for the copy engine. */
    private volatile Nic nic;
    private volatile VerbsSession session;
    /** The host-queued transfers toward the peer (set once built). */
    private volatile HostTransfers transfers;
    private final List<AutoCloseable> resources;
    private final MappedHostMemory fifoMemory;
    private final DeviceMemory deviceChannel;
    private final Channel channel;
    private final Consumer<ProxyChannel> onClosed;
    private boolean closed;

    /**
     * What the channel needs of its peer, whether the peer is a rank of this process or one in another process whose
     * heap the world mapped by CUDA IPC.
     *
     * @param rank      the peer's rank
     * @param heapBase  its heap as the local GPU addresses it
     * @param heapBytes its heap size
     * @param sameGpu   whether it is on the local rank's GPU
     * @param inProcess the peer as a rank of this process, or null when it lives in another process (then its
     *                  context, streams and abort word are out of reach: signals take the direct path)
     */
    private record PeerSide(int rank, long heapBase, long heapBytes, boolean sameGpu, LinkEnd inProcess) {
        static PeerSide of(LinkEnd local, LinkEnd peer) {
            return new PeerSide(peer.rank(), peer.heapBase(), peer.heapSizeBytes(),
                    local.device().ordinal() == peer.device().ordinal(), peer);
        }

        /** A rank of another process: its heap as the world mapped it here; its context and abort word out of reach. */
        static PeerSide of(RemotePeer peer) {
            return new PeerSide(peer.rank(), peer.heapAddress(), peer.heapBytes(), peer.sameGpu(), null);
        }

        void raiseAbort() {
            if (inProcess != null) {
                inProcess.raiseAbort();
            }
        }
    }

    private ProxyChannel(String name, PeerSide peer, ProxyService service, boolean peerStreamSignals,
                         String handlerLabel, List<AutoCloseable> resources, MappedHostMemory fifoMemory, DeviceMemory deviceChannel,
                         Channel channel, Consumer<ProxyChannel> onClosed) {
        this.name = name;
        this.peer = peer;
        this.service = service;
        this.peerStreamSignals = peerStreamSignals;
        this.handlerLabel = handlerLabel;
        this.resources = resources;
        this.fifoMemory = fifoMemory;
        this.deviceChannel = deviceChannel;
        this.channel = channel;
        this.onClosed = onClosed;
    }

    /**
     * Builds the channel {@code local -> peer} and registers it with {@code service} (thread {@code local.rank() mod
     * threads}).
     *
     * @param peerStreamSignals deliver signals through a stream on the peer's GPU (no peer access needed) instead of
     *                          the channel's own stream
     * @param onClosed          told once the channel is closed (the transport's reference count)
     */
    static ProxyChannel open(LinkEnd local, LinkEnd peer, ProxyService service, ProxyConfig config,
                             boolean peerStreamSignals, Consumer<ProxyChannel> onClosed) {
        return open(local, PeerSide.of(local, peer), service, config, peerStreamSignals, onClosed);
    }

    /**
     * Builds the channel {@code local -> peer} to a rank of another process: the copy engine copies into the peer's
     * heap as the world mapped it by CUDA IPC, and signals are written from this process's stream (direct path).
     */
    static ProxyChannel openAcrossProcesses(LinkEnd local, RemotePeer peer, ProxyService service, ProxyConfig config,
                                            Consumer<ProxyChannel> onClosed) {
        return open(local, PeerSide.of(peer), service, config, false, onClosed);
    }

    private static ProxyChannel open(LinkEnd local, PeerSide peer, ProxyService service, ProxyConfig config,
                                     boolean peerStreamSignals, Consumer<ProxyChannel> onClosed) {
        if (peerStreamSignals && peer.inProcess() == null) {
            throw new IllegalArgumentException("peer-stream signals need the peer's context in this process");
        }
        // Across processes the IPC mapping enabled peer access already (lazily, by the driver).
        if (!peerStreamSignals && !peer.sameGpu() && peer.inProcess() != null) {
            local.context().enablePeerAccess(peer.inProcess().context());
        }
        ProxyChannel pc = build(local, peer, service, config, peerStreamSignals, "copy engine", (name, stream, deviceChannel,
                                                                                      resources) -> {
            CudaStream signalStream = null;
            CudaEvent copiesDone = null;
            CudaEvent signalsDone = null;
            if (peerStreamSignals) {
                signalStream = add(resources, peer.inProcess().context().createStream());
                copiesDone = add(resources, local.context().createOrderingEvent());
                signalsDone = add(resources, peer.inProcess().context().createOrderingEvent());
            }
            LinkEnd signaller = peerStreamSignals ? peer.inProcess() : local;
            // Across processes the peer's context is out of reach; the direct path never uses it (copies and
            // signals run on the local stream into the mapped heap), so the local context stands in.
            CudaContext peerContext = peer.inProcess() != null ? peer.inProcess().context() : local.context();
            CudaStream finalSignalStream = signalStream;
            return new CopyEngineHandler(name, local.heapBase(), peer.heapBase(),
                    Math.min(local.heapSizeBytes(), peer.heapBytes()), local.context(), peerContext, stream,
                    peerStreamSignals, signalStream, copiesDone, signalsDone,
                    signaller.kernel(CopyEngineHandler.MODULE, CopyEngineHandler.ATOMIC_ADD_KERNEL),
                    deviceChannel.pointer().plusBytes(CHANNEL_DONE_OFFSET),
                    finalSignalStream == null ? () -> true : finalSignalStream::isClosed);
        }, onClosed);
        // Without peer access the copies go through cuMemcpyPeerAsync, as the handler's do.
        pc.transfers = new CopyEngineTransfers(pc.name, local.context(),
                peerStreamSignals ? peer.inProcess().context() : null, peer.heapBase(),
                Math.min(local.heapSizeBytes(), peer.heapBytes()));
        return pc;
    }

    /**
     * Builds the channel {@code local -> peer} with the verbs handler over {@code link} (made by a
     * {@link VerbsSession} on the NIC both ranks use): the proxy thread posts RDMA work toward the peer's NIC.
     *
     * @param nic the NIC the link's QP is on (named in the handler label; the emulated one says so)
     */
    static ProxyChannel openVerbs(LinkEnd local, LinkEnd peer, ProxyService service, ProxyConfig config, VerbsLink link,
                                  VerbsSession session, Consumer<ProxyChannel> onClosed) {
        return openVerbs(local, PeerSide.of(local, peer), service, config, link, session, onClosed);
    }

    /**
     * Builds the channel {@code local -> peer} to a rank of another process with the verbs handler over {@code link}
     * (made by {@link VerbsSession#connectAcrossProcesses} from the peer's offer). The peer's abort word is out of
     * reach: a failed channel raises the local rank's only, and the world tells the peer through the bootstrap.
     */
    static ProxyChannel openVerbsAcrossProcesses(LinkEnd local, RemotePeer peer, ProxyService service,
                                                 ProxyConfig config, VerbsLink link, VerbsSession session,
                                                 Consumer<ProxyChannel> onClosed) {
        return openVerbs(local, PeerSide.of(peer), service, config, link, session, onClosed);
    }

    private static ProxyChannel openVerbs(LinkEnd local, PeerSide peer, ProxyService service, ProxyConfig config,
                                          VerbsLink link, VerbsSession session, Consumer<ProxyChannel> onClosed) {
        Nic nic = session.nic();
        String label = "verbs on " + (nic.isEmulated() ? "the emulated NIC (" + nic.description() + ")"
                : nic.description());
        VerbsHandler[] made = new VerbsHandler[1];
        ProxyChannel pc = build(local, peer, service, config, false, label,
                (name, stream, deviceChannel, resources) -> {
                    CudaContext context = local.context();
                    MutableDevicePointer doneWord = new MutableDevicePointer();
                    doneWord.set(deviceChannel.address() + CHANNEL_DONE_OFFSET);
                    // A flush's completion: a stream-ordered 8-byte write into GPU memory; the proxy does not wait.
                    VerbsHandler.DoneWord done = value -> {
                        Driver.makeCurrent(context);
                        int result = Driver.writeValue64(stream, doneWord, value);
                        if (result != Driver.SUCCESS) {
                            throw new ProxyException("cuStreamWriteValue64(done) failed on " + name + ": "
                                    + CudaException.describe(result));
                        }
                    };
                    VerbsHandler.ErrorRecordWriter errors = record -> writeErrorRecord(local, context, stream, record);
                    made[0] = new VerbsHandler(name, link, config.credits(), config.creditTimeout().toNanos(),
                            config.closeTimeout().toNanos(), done, errors);
                    return made[0];
                }, onClosed);
        pc.nic = nic;
        pc.session = session;
        pc.transfers = new VerbsTransfers(pc.name, link, made[0], local.heapBase());
        return pc;
    }

    /**
     * Writes a host-made error record into the rank's device error record unless a device call claimed it first
     * (the first failure wins, as on the device). Error path only: it waits for its own copies.
     */
    private static void writeErrorRecord(LinkEnd local, CudaContext context, CudaStream stream, ByteBuffer record) {
        Driver.makeCurrent(context);
        MutableDevicePointer at = new MutableDevicePointer();
        at.set(local.errorRecordAddress());
        byte[] current = new byte[ErrorRecordDescriptor.LENGTH];
        check(Driver.copyToHostAsync(current, at, current.length, stream), "reading");
        check(Driver.synchronize(stream), "reading");
        ByteBuffer seen = ByteBuffer.wrap(current).order(ByteOrder.LITTLE_ENDIAN);
        if (seen.getInt(ErrorRecordDescriptor.CODE_OFFSET) != 0
                || seen.getInt(ErrorRecordDescriptor.CLAIMED_OFFSET) != 0) {
            return;
        }
        byte[] bytes = new byte[ErrorRecordDescriptor.LENGTH];
        record.duplicate().clear().get(bytes);
        check(Driver.copyFromHostAsync(at, bytes, bytes.length, stream), "writing");
        check(Driver.synchronize(stream), "writing");
    }

    private static void check(int result, String what) {
        if (result != Driver.SUCCESS) {
            throw new ProxyException(what + " the device error record failed: " + CudaException.describe(result));
        }
    }

    /** Makes a channel's handler once its stream and device channel object exist; adds what it creates. */
    @FunctionalInterface
    private interface HandlerFactory {
        TriggerHandler create(String name, CudaStream stream, DeviceMemory deviceChannel,
                              List<AutoCloseable> resources);
    }

    private static ProxyChannel build(LinkEnd local, PeerSide peer, ProxyService service, ProxyConfig config,
                                      boolean peerStreamSignals, String handlerLabel, HandlerFactory handlers,
                                      Consumer<ProxyChannel> onClosed) {
        String name = "rank " + local.rank() + " -> rank " + peer.rank();
        int depth = config.fifoDepth();
        List<AutoCloseable> resources = new ArrayList<>();
        try {
            MappedHostMemory fifoMemory = add(resources, local.context().allocateMappedHost(
                    TriggerFifoDescriptor.regionBytes(depth)));
            DeviceMemory deviceChannel = add(resources, local.context().allocate(CHANNEL_LENGTH));
            ByteBuffer b = ByteBuffer.allocateDirect(CHANNEL_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            b.putLong(CHANNEL_RING_OFFSET, fifoMemory.deviceAddress() + RING_OFFSET);
            b.putLong(CHANNEL_CONTROL_OFFSET, fifoMemory.deviceAddress());
            b.putInt(CHANNEL_CAPACITY_OFFSET, depth);
            b.putInt(CHANNEL_CAPACITY_LOG2_OFFSET, Integer.numberOfTrailingZeros(depth));
            b.putInt(CHANNEL_RANK_OFFSET, local.rank());
            b.putInt(CHANNEL_PEER_OFFSET, peer.rank());
            b.putLong(CHANNEL_HEAD_OFFSET, 0);
            b.putLong(CHANNEL_DONE_OFFSET, 0);
            deviceChannel.copyFromHost(0, b);

            CudaStream stream = add(resources, local.context().createStream());
            TriggerHandler handler = handlers.create(name, stream, deviceChannel, resources);
            TriggerFifo fifo = new TriggerFifo(fifoMemory.hostBuffer(), depth);
            // A failed channel stops both ends' spins at once rather than after their timeouts.
            Channel channel = new Channel(name, fifo, handler, ProxyConfig.BATCH, () -> {
                local.raiseAbort();
                peer.raiseAbort();
            });
            ProxyChannel pc = new ProxyChannel(name, peer, service, peerStreamSignals, handlerLabel, resources,
                    fifoMemory, deviceChannel, channel, onClosed);
            service.add(channel, local.rank());
            return pc;
        } catch (RuntimeException e) {
            closeAll(resources, e);
            throw e;
        }
    }

    private static <T extends AutoCloseable> T add(List<AutoCloseable> resources, T r) {
        resources.add(r);
        return r;
    }

    /** The PeerEntry contents of this link: tag PROXY, handle = the device channel object. */
    PeerLink link() {
        // The peer's abort word is reachable only with peer access (or on the same GPU), and only in this process.
        long peerAbort = peer.inProcess() == null ? 0
                : peer.sameGpu() || !peerStreamSignals ? peer.inProcess().abortFlagAddress() : 0;
        return new PeerLink(Transport.PROXY, 0, deviceChannel.address(), 0, 0, peerAbort, this);
    }

    public String name() {
        return name;
    }

    /** The service this channel is registered with. */
    public ProxyService service() {
        return service;
    }

    /** The proxy-side channel (FIFO and handler). */
    public Channel channel() {
        return channel;
    }

    /** Device address of the channel object (the PeerEntry handle). */
    public long deviceHandle() {
        return deviceChannel.address();
    }

    /** Which handler executes the triggers: "copy engine" or "verbs on" and the NIC, for info and result labels. */
    public String handlerLabel() {
        return handlerLabel;
    }

    /** The NIC the verbs handler posts on; empty for the copy engine. */
    @Override
    public Optional<Nic> nic() {
        return Optional.ofNullable(nic);
    }

    /** The verbs handler's session (registrations and QPs), or null: for tests that play a dead peer. */
    VerbsSession verbsSession() {
        return session;
    }

    @Override
    public boolean readsAnyDeviceMemory() {
        return transfers().readsAnyDeviceMemory();
    }

    @Override
    public void queue(CudaStream stream, List<Transfer> list, long counterAddress, long signalOffset,
                      Consumer<Runnable> hostWork) {
        transfers().queue(stream, list, counterAddress, signalOffset, hostWork);
    }

    private HostTransfers transfers() {
        if (closed) {
            throw new IllegalStateException(name + " is closed: its host-queued transfers went with it");
        }
        return transfers;
    }

    /** Whether signals travel through a stream on the peer's GPU (signal path peer-stream). */
    public boolean peerStreamSignals() {
        return peerStreamSignals;
    }

    /** Triggers the host has popped from this channel so far. */
    public long popped() {
        return channel.fifo().publishedTail();
    }

    /** Positions the GPU has claimed so far (reads the channel's head from GPU memory; for tests and diagnostics). */
    public long claimed() {
        return deviceChannel.readLong(CHANNEL_HEAD_OFFSET);
    }

    @Override
    public Optional<String> problem() {
        return channel.problem();
    }

    /** Drains and unregisters the channel, then frees its memory and streams. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        try {
            service.remove(channel);
        } catch (RuntimeException e) {
            failure = e;
        }
        failure = closeAll(resources, failure);
        try {
            onClosed.accept(this);
        } catch (RuntimeException e) {
            failure = accumulate(failure, e);
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException closeAll(List<AutoCloseable> resources, RuntimeException failure) {
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                failure = accumulate(failure, e);
            }
        }
        resources.clear();
        return failure;
    }

    private static RuntimeException accumulate(RuntimeException failure, Exception next) {
        if (failure == null) {
            return next instanceof RuntimeException ? (RuntimeException) next : new IllegalStateException(next);
        }
        failure.addSuppressed(next);
        return failure;
    }

    @Override
    public String toString() {
        return "ProxyChannel[" + name + ", " + handlerLabel + ", fifo " + fifoMemory.sizeBytes() + " B]";
    }
}

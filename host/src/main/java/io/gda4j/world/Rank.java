package io.gda4j.world;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaDevice;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.cuda.ModuleImage;
import io.gda4j.transport.LinkEnd;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.Transport;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One rank of a world, driven by this process: its GPU context, its symmetric heap, its device view, error record
 * and abort flag, its stream. Owned by the world, which closes it.
 *
 * <p>The control block is one device allocation: {@code [device view | error record]}, so a kernel needs only the
 * view's address and the host reads the record with one copy once the kernels are done. The abort word lives apart,
 * in mapped pinned host memory (see {@link #raiseAbort()}).
 */
public final class Rank implements LinkEnd, AutoCloseable {
    private static final int CONTROL_ALIGN = 64;

    private final int rank;
    private final int worldSize;
    private final CudaContext context;
    private final CudaStream stream;
    private final CudaStream controlStream;
    private final DeviceMemory heap;
    private final DeviceMemory control;
    private final DeviceMemory scratch;
    private final int errorRecordOffset;
    /** The abort word: pinned host memory mapped into every GPU (portable), read by kernels every 64 polls. */
    private final MappedHostMemory abortWord;
    /** Pinned landing place for control-block reads made while kernels may still run (see readControl). */
    private final MappedHostMemory controlReadback;
    private final PeerLink[] links;
    /** The world's modules, shared with the other ranks on this GPU; the world unloads them. */
    private final ModuleTable modules;
    /** How long {@link #synchronize()} waits: {@link #synchronizeLimit} of the world's device wait timeout. */
    private final Duration synchronizeLimit;
    /** Why work still running after {@link #synchronizeLimit} is stuck: the end of the timeout's message. */
    private final String synchronizeWhy;
    private boolean closed;

    Rank(int rank, int worldSize, CudaContext context, long heapSizeBytes, Duration waitTimeout,
         ModuleTable modules) {
        this.rank = rank;
        this.synchronizeLimit = synchronizeLimit(waitTimeout);
        this.synchronizeWhy = "every wait in gda4j's kernels gives up after the world's device wait timeout ("
                + waitTimeout.toMillis() + " ms), so what still runs is a kernel that does not end by itself: a"
                + " kernel of yours that needs longer (raise the timeout: GDA4J_WAIT_TIMEOUT_MS or"
                + " WorldConfig.waitTimeout), or a hung kernel of gda4j's (a bug: please report it with this message)."
                + " The work stays queued: close the world, or end the process if close reports kernels still running";
        this.worldSize = worldSize;
        this.context = context;
        this.modules = modules;
        this.links = new PeerLink[worldSize];
        int viewLength = align(DeviceViewDescriptor.viewLength(worldSize));
        this.errorRecordOffset = viewLength;
        CudaStream s = null;
        CudaStream cs = null;
        DeviceMemory h = null;
        DeviceMemory c = null;
        DeviceMemory sc = null;
        MappedHostMemory rb = null;
        MappedHostMemory ab = null;
        try {
            s = context.createStream("rank " + rank + " work stream");
            cs = context.createStream("rank " + rank + " control stream");
            h = context.allocate(heapSizeBytes);
            h.fill((byte) 0);
            c = context.allocate(errorRecordOffset + ErrorRecordDescriptor.LENGTH);
            c.fill((byte) 0);
            sc = context.allocate(256);
            sc.fill((byte) 0);
            rb = context.allocateMappedHost(ErrorRecordDescriptor.LENGTH + CONTROL_ALIGN);
            ab = context.allocateMappedHost(CONTROL_ALIGN);
        } catch (RuntimeException e) {
            closeQuietly(ab);
            closeQuietly(rb);
            closeQuietly(sc);
            closeQuietly(c);
            closeQuietly(h);
            closeQuietly(cs);
            closeQuietly(s);
            throw e;
        }
        this.stream = s;
        this.controlStream = cs;
        this.heap = h;
        this.control = c;
        this.scratch = sc;
        this.controlReadback = rb;
        this.abortWord = ab;
    }

    private static int align(int n) {
        return (n + CONTROL_ALIGN - 1) & -CONTROL_ALIGN;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int worldSize() {
        return worldSize;
    }

    @Override
    public CudaDevice device() {
        return context.device();
    }

    @Override
    public CudaContext context() {
        return context;
    }

    /** The rank's work stream: kernels launched through gda4j run here. */
    public CudaStream stream() {
        return stream;
    }

    /**
     * How long {@link #synchronize()} waits: 4 times the world's device wait timeout, and 30 s more. Every wait in
     * gda4j's kernels gives up after the timeout, and a call's kernels wait one after another a few times at most.
     */
    static Duration synchronizeLimit(Duration waitTimeout) {
        return waitTimeout.multipliedBy(4).plusSeconds(30);
    }

    /**
     * Waits until the work queued on the rank's stream has finished, as {@code stream().synchronize()} does, but for
     * at most {@link #synchronizeLimit} of the world's wait timeout: work still running after that is a kernel that
     * does not end by itself, and a blocking wait would hang the caller with it. gda4j's own waits for a rank's work
     * go through here.
     *
     * @throws io.gda4j.cuda.StreamTimeoutException at the limit, saying what may be running
     */
    public void synchronize() {
        synchronize(stream);
    }

    /**
     * As {@link #synchronize()}, for another stream of this rank's (a communication stream, say).
     *
     * @throws io.gda4j.cuda.StreamTimeoutException at the limit, saying what may be running
     */
    public void synchronize(CudaStream other) {
        other.synchronize(synchronizeLimit, synchronizeWhy);
    }

    public DeviceMemory heapMemory() {
        return heap;
    }

    @Override
    public long heapBase() {
        return heap.address();
    }

    @Override
    public long heapSizeBytes() {
        return heap.sizeBytes();
    }

    /** Address of this rank's device view: the first argument of every kernel that uses the device API. */
    public DevicePointer deviceView() {
        return control.pointer();
    }

    @Override
    public long abortFlagAddress() {
        return abortWord.deviceAddress();
    }

    @Override
    public long errorRecordAddress() {
        return control.address() + errorRecordOffset;
    }

    /** 256 bytes of device memory for kernels' status words (used by the toolkit's own launches). */
    public DeviceMemory scratch() {
        return scratch;
    }

    public Transport transportTo(int peer) {
        checkPeer(peer);
        PeerLink link = links[peer];
        return link == null ? Transport.NONE : link.transport();
    }

    /**
     * The link to {@code peer} (what its transport set up; its resources, e.g. a proxy channel), or null before the
     * world has connected it.
     */
    public PeerLink link(int peer) {
        checkPeer(peer);
        return links[peer];
    }

    /** What this rank's links report as wrong (a dead proxy thread, ...), one sentence each; empty when all is well. */
    public List<String> linkProblems() {
        List<String> problems = new ArrayList<>();
        for (PeerLink link : links) {
            if (link != null) {
                link.problem().ifPresent(problems::add);
            }
        }
        return problems;
    }

    void checkPeer(int peer) {
        if (peer < 0 || peer >= worldSize) {
            throw new IllegalArgumentException("peer " + peer + " out of range: the world has ranks 0.." + (worldSize - 1));
        }
    }

    /**
     * A kernel of one of the toolkit's modules ({@code io/gda4j/ptx/<module>.ptx}). The module is loaded once per
     * GPU and shared by the ranks on it; if this is its first use on this GPU it is loaded now, which is refused
     * while a kernel on this GPU may run (load it first with {@link World#loadModules(String...)}).
     *
     * @throws io.gda4j.cuda.ContextBusyException when the module must be loaded while a kernel on this GPU runs
     */
    @Override
    public Kernel kernel(String module, String function) {
        return modules.module(context, module).function(function);
    }

    /**
     * A kernel of your own module (PTX or cubin, from {@link ModuleImage#file}, {@link ModuleImage#classPathResource}
     * or {@link ModuleImage#bytes}), loaded once per GPU as {@link #kernel(String, String)}. Launch it on
     * {@link #stream()} with {@link #deviceView()} as its first argument.
     */
    public Kernel kernel(ModuleImage module, String function) {
        return modules.module(context, module).function(function);
    }

    void setLink(int peer, PeerLink link) {
        links[peer] = link;
    }

    /** Writes the device view from the links; called once all links exist. */
    void writeDeviceView(long timeoutNanos) {
        control.copyFromHost(0, deviceView(rank, links, heapBase(), heapSizeBytes(), abortFlagAddress(),
                errorRecordAddress(), timeoutNanos));
    }

    /**
     * The bytes of the device view of {@code rank}, whose peer {@code p} is reached through {@code links[p]} (null:
     * no link, TRANSPORT_NONE), positioned at 0. Pure, so a test can read what the GPU would get. The header's flags
     * are the union of the links' {@link Transport#viewFlag()}: the world names no transport that sets them.
     */
    static ByteBuffer deviceView(int rank, PeerLink[] links, long heapBase, long heapSizeBytes, long abortFlag,
                                 long errorRecord, long timeoutNanos) {
        int worldSize = links.length;
        ByteBuffer b = ByteBuffer.allocateDirect(DeviceViewDescriptor.viewLength(worldSize)).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(DeviceViewDescriptor.MAGIC_OFFSET, DeviceViewDescriptor.VIEW_MAGIC);
        b.putInt(DeviceViewDescriptor.VERSION_OFFSET, DeviceViewDescriptor.VIEW_VERSION);
        b.putInt(DeviceViewDescriptor.RANK_OFFSET, rank);
        b.putInt(DeviceViewDescriptor.NRANKS_OFFSET, worldSize);
        b.putLong(DeviceViewDescriptor.HEAP_BASE_OFFSET, heapBase);
        b.putLong(DeviceViewDescriptor.HEAP_SIZE_BYTES_OFFSET, heapSizeBytes);
        b.putLong(DeviceViewDescriptor.ABORT_FLAG_OFFSET, abortFlag);
        b.putLong(DeviceViewDescriptor.ERROR_RECORD_OFFSET, errorRecord);
        b.putLong(DeviceViewDescriptor.TIMEOUT_NS_OFFSET, timeoutNanos);
        int flags = 0;
        for (PeerLink link : links) {
            if (link != null) {
                flags |= link.transport().viewFlag();
            }
        }
        b.putInt(DeviceViewDescriptor.FLAGS_OFFSET, flags);
        for (int p = 0; p < worldSize; p++) {
            int e = DeviceViewDescriptor.peerEntryOffset(p);
            PeerLink link = links[p];
            Transport transport = link == null ? Transport.NONE : link.transport();
            b.putInt(e + DeviceViewDescriptor.PEER_TRANSPORT_OFFSET, transport.code());
            b.putInt(e + DeviceViewDescriptor.PEER_CAPS_OFFSET, transport.capabilityBits());
            b.putInt(e + DeviceViewDescriptor.PEER_RANK_OFFSET, p);
            if (link != null) {
                b.putLong(e + DeviceViewDescriptor.PEER_HEAP_OFFSET, link.peerHeap());
                b.putLong(e + DeviceViewDescriptor.PEER_HANDLE_OFFSET, link.handle());
                b.putInt(e + DeviceViewDescriptor.PEER_RKEY_OFFSET, link.rkey());
                b.putInt(e + DeviceViewDescriptor.PEER_LKEY_OFFSET, link.lkey());
                // A rank's own abort word is already in the header; listing it again would only write it twice.
                b.putLong(e + DeviceViewDescriptor.PEER_ABORT_FLAG_OFFSET, p == rank ? 0 : link.peerAbortFlag());
            }
        }
        b.position(0);
        return b;
    }

    /**
     * Reads the error record: a copy on the rank's control stream, so it does not queue behind the work stream.
     * The record is complete once the kernels that may write it are done; read it then.
     */
    public synchronized ErrorRecord readErrorRecord() {
        return ErrorRecord.decode(readControl(errorRecordOffset, ErrorRecordDescriptor.LENGTH));
    }

    /**
     * True when this rank's abort flag is raised (by a device failure here or at a peer, or by the host). An acquire
     * load of pinned host memory: safe and cheap while kernels spin.
     */
    public synchronized boolean abortRaised() {
        return abortWord.getLongAcquire(0) != 0;
    }

    /** Copies control-block bytes to pinned memory on the control stream and waits for that copy alone. */
    private ByteBuffer readControl(int offset, int length) {
        controlStream.copyAsync(controlReadback.devicePointer(), control.pointer().plusBytes(offset), length);
        controlStream.synchronize();
        ByteBuffer copy = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer view = controlReadback.hostBuffer().order(ByteOrder.LITTLE_ENDIAN);
        view.limit(length);
        copy.put(view);
        copy.flip();
        return copy;
    }

    /**
     * Raises the abort flag from the host while kernels may be running: a release store into pinned host memory,
     * seen by a spinning kernel within 64 polls (measured on 2x H200: a wait_until kernel stopped 1-2 ms after the
     * call). The failure path makes no CUDA call at all, so nothing it does can queue behind the work it is meant
     * to stop. Pairs with the device's volatile load of the word.
     */
    @Override
    public void raiseAbort() {
        abortWord.putLongRelease(0, 1L);
    }

    /** Zeroes the error record and lowers the abort flag. */
    public void clearErrors() {
        control.fill(errorRecordOffset, ErrorRecordDescriptor.LENGTH, (byte) 0);
        abortWord.putLongRelease(0, 0L);
    }

    // Convenience accessors of the heap for set-up and checks; they bounds-check against the heap.

    public void writeHeap(long offset, byte[] src) {
        heap.copyFromHost(offset, src, 0, src.length);
    }

    public void readHeap(long offset, byte[] dst) {
        heap.copyToHost(offset, dst, 0, dst.length);
    }

    public void fillHeap(long offset, long bytes, byte value) {
        heap.fill(offset, bytes, value);
    }

    public long readHeapLong(long offset) {
        return heap.readLong(offset);
    }

    public void writeHeapLong(long offset, long value) {
        heap.writeLong(offset, value);
    }

    /**
     * Closes the links to the peers, newest first, ahead of the rank: a proxy link drains its channel, so when this
     * returns nothing of this rank's still writes into a peer's heap (a process world unmaps the peers' heaps only
     * after that). Kernels must be stopped first. The links are gone afterwards ({@link #transportTo} says NONE).
     *
     * @param first a failure so far (the new ones are added to it), or null
     * @return the first failure, with the later ones suppressed, or null
     */
    synchronized RuntimeException closeLinks(RuntimeException first) {
        for (int p = links.length - 1; p >= 0; p--) {
            first = closeCollecting(links[p], first);
            links[p] = null;
        }
        return first;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = closeLinks(null);
        first = closeCollecting(abortWord, first);
        first = closeCollecting(controlReadback, first);
        first = closeCollecting(scratch, first);
        first = closeCollecting(control, first);
        first = closeCollecting(heap, first);
        first = closeCollecting(controlStream, first);
        first = closeCollecting(stream, first);
        first = closeCollecting(context, first);
        if (first != null) {
            throw first;
        }
    }

    private static RuntimeException closeCollecting(AutoCloseable c, RuntimeException first) {
        if (c == null) {
            return first;
        }
        try {
            c.close();
        } catch (Exception e) {
            RuntimeException r = e instanceof RuntimeException ? (RuntimeException) e : new IllegalStateException(e);
            if (first == null) {
                return r;
            }
            first.addSuppressed(r);
        }
        return first;
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception ignored) {
                // already failing; the first exception is the one the caller needs
            }
        }
    }

    @Override
    public String toString() {
        return "rank " + rank + " on GPU " + device().ordinal();
    }
}

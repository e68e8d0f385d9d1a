package io.gda4j.nic.emulated;

import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicCapabilities;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpAddress;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.RingPlacement;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AgentTerminationException;

/**
 * The emulated NIC ({@value Nic#EMULATED}): mlx5 rings in memory the GPU maps, executed by an
 * {@link EmulatedEngine} thread through a {@link EmulatedPlatform} (CUDA streams on a GPU machine). A test
 * instrument and a development backend: every figure measured through it must say "emulated NIC".
 *
 * <p>QPs connect to QPs of this NIC ({@link #createConnectedPair}), to QPs of another emulated NIC of this process
 * ({@link io.gda4j.nic.QpPair#connect}: one NIC per GPU, as on a machine with a ConnectX per GPU), or to a responder
 * in another process of this host ({@link #createQpToProcess}), where the requester's engine executes the WQEs itself
 * on the responder's memory mapped by CUDA IPC, checked against the responder's published registrations. One
 * protection domain and key table per NIC: a local key must be this NIC's, a remote key the responder NIC's (its
 * keys carry a per-NIC tag, so another NIC's key matches nothing), and a key registered on the wrong NIC fails with
 * REMOTE_ACCESS or LOCAL_PROT, as on hardware.
 */
public final class EmulatedNic implements Nic, SoftwareNic {
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /** Every open emulated NIC of this process by device name: the "fabric" QPs of different NICs connect over. */
    private static final Map<String, EmulatedNic> FABRIC = new ConcurrentHashMap<>();
    private static final int MAX_FAULTS = 64;
    private static final long QUIESCE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** Ends the engine's Agrona loop once {@link #stopEngine()} ran; made once, no stack trace: it is control flow. */
    private static final AgentTerminationException ENGINE_STOPPED =
            new AgentTerminationException("emulated NIC engine stopped", null, false, false);

    private final EmulatedPlatform platform;
    private final EmulatedNicConfig config;
    private final String deviceName;
    private final RegistrationTable table;
    private final EmulatedEngine engine;
    private final List<EmulatedQp> open = new ArrayList<>();
    private final ArrayDeque<String> faults = new ArrayDeque<>();
    private volatile EmulatedQp[] qps = new EmulatedQp[0];
    private volatile boolean running;
    private Thread thread;
    private Registration nullRegion;
    private int nextQpn = 0x000100;
    private boolean closed;

    /** Opens an emulated NIC over {@code platform}; starts the engine thread when {@code config.startEngine()}. */
    public EmulatedNic(EmulatedPlatform platform, EmulatedNicConfig config) {
        this.platform = platform;
        this.config = config;
        int instance = INSTANCES.incrementAndGet();
        this.deviceName = "emulated#" + instance;
        // Keys differ between NICs of a process (and, likely, between processes): a key used on the wrong NIC fails.
        this.table = new RegistrationTable((int) Math.floorMod(ProcessHandle.current().pid() * 37 + instance, 254L) + 1);
        this.engine = new EmulatedEngine(this, table);
        FABRIC.put(deviceName, this);
        if (config.startEngine()) {
            running = true;
            AgentRunner runner = new AgentRunner(config.newIdleStrategy(), e -> {
                if (e != ENGINE_STOPPED) {
                    recordFault("engine loop failed: " + e);
                }
            }, null, new EngineAgent("gda4j-emulated-nic-" + deviceName.substring(9)));
            thread = AgentRunner.startOnThread(runner, r -> {
                Thread t = new Thread(r);
                t.setDaemon(true);
                return t;
            });
        }
    }

    /** The engine as an Agrona agent; a failed pass is recorded as a fault and the next pass tries again. */
    private final class EngineAgent implements Agent {
        private final String roleName;

        EngineAgent(String roleName) {
            this.roleName = roleName;
        }

        @Override
        public int doWork() {
            if (!running) {
                throw ENGINE_STOPPED;
            }
            try {
                return engine.doWork();
            } catch (RuntimeException | Error e) {
                recordFault("engine pass failed, retrying: " + e);
                return 0;
            }
        }

        @Override
        public String roleName() {
            return roleName;
        }
    }

    @Override
    public String name() {
        return EMULATED;
    }

    /** {@code emulated#N}: what QP addresses name. */
    public String deviceName() {
        return deviceName;
    }

    @Override
    public String description() {
        return "emulated NIC " + deviceName + " (software model: engine thread + " + platform.describe()
                + ", idle " + config.idleStrategy() + (config.strict() ? ", strict" : ", lenient")
                + (config.writesPassCqe() ? ", writes may pass CQEs" : "")
                + "; not a real network)";
    }

    EmulatedNicConfig config() {
        return config;
    }

    @Override
    public NicCapabilities capabilities() {
        // Relaxed ordering: the emulated NIC registers nothing relaxed on its own; a region asks for it by its access
        // flags (NicAccess.RELAXED_ORDERING), and strict mode then lets writes into it land out of order.
        // No GPUDirect writes: its writes are CUDA copies, which the GPU's GPUDirect RDMA ordering attribute says
        // nothing of. Process links: QPs to ranks of other processes through CUDA IPC (createQpToProcess).
        return new NicCapabilities(1 << 15, 1 << 22, WqeDescriptor.MAX_INLINE_BYTES, true, true,
                config.writesPassCqe(), false, false, true);
    }

    /** How many of this NIC's open QPs keep their rings at {@code placement}. */
    public synchronized int openQps(RingPlacement placement) {
        int n = 0;
        for (EmulatedQp qp : open) {
            n += (qp.deviceRingMemory != null) == (placement == RingPlacement.GPU) ? 1 : 0;
        }
        return n;
    }

    /** Rings in GPU memory where the platform has them (CUDA; the engine copies what it reads and writes). */
    @Override
    public java.util.Optional<String> gpuRingsUnsupportedReason() {
        return platform.deviceRingsUnsupportedReason();
    }

    @Override
    public synchronized NicMemory registerMemory(MemoryRegistration request) {
        requireOpen();
        return table.add(request.address(), request.lengthBytes(), request.access(), request.kind(), false,
                request.label());
    }

    @Override
    public synchronized NicMemory nullMemory() {
        requireOpen();
        if (nullRegion == null) {
            nullRegion = table.add(0, 0, Set.of(NicAccess.LOCAL_WRITE), MemoryKind.DEVICE, true, "null region");
        }
        return nullRegion;
    }

    @Override
    public synchronized NicQp createQp(QpSpec spec) {
        requireOpen();
        if (spec.sqWqebbs() > capabilities().maxSqWqebbs() || spec.maxInlineBytes() > WqeDescriptor.MAX_INLINE_BYTES) {
            throw new NicException(spec.label() + ": the emulated NIC takes at most " + capabilities().maxSqWqebbs()
                    + " WQEBBs and " + WqeDescriptor.MAX_INLINE_BYTES + " inline bytes");
        }
        if (spec.rings() == RingPlacement.GPU && gpuRingsUnsupportedReason().isPresent()) {
            throw new NicException(spec.label() + ": rings in GPU memory: " + gpuRingsUnsupportedReason().get());
        }
        EmulatedQp qp = new EmulatedQp(this, spec, nextQpn++ & 0xffffff, platform);
        open.add(qp);
        qps = open.toArray(new EmulatedQp[0]);
        return qp;
    }

    @Override
    public synchronized NicQp createQpToProcess(QpSpec spec, RemoteResponder responder) {
        EmulatedQp qp = (EmulatedQp) createQp(spec);
        qp.connectToProcess(responder);
        return qp;
    }

    /**
     * Makes strict atomics on {@code region} (registered here) take {@code lockAddress}, an 8-byte-aligned word of
     * zeroed GPU memory that other processes' emulated NICs map by CUDA IPC and take too before their atomics on the
     * region (their {@link RemoteResponder} entry names the same word). On hardware the responder's NIC executes
     * every atomic on its memory, so atomics from different requesters are atomic with each other; across processes
     * there are several engines, and the lock is what keeps them so (the NIC-wide {@link AtomicChain} orders only
     * this process's). The lock is taken on the GPU by the atomic kernel; GPU atomics of kernels do not take it, so
     * they still lose updates against NIC atomics, as on hardware. Call before any QP can name the region.
     */
    @Override
    public void serializeAtomics(NicMemory region, long lockAddress) {
        if (!(region instanceof Registration r) || table.find(r.key()) != r) {
            throw new IllegalArgumentException(region + " is not registered with " + deviceName);
        }
        if ((lockAddress & 7) != 0 || lockAddress == 0) {
            throw new IllegalArgumentException(String.format("atomic lock at 0x%x: needs an 8-byte aligned word",
                    lockAddress));
        }
        r.atomicLock = lockAddress;
    }

    /** The engine, for tests that drive it by hand (a NIC opened with {@code startEngine} false). */
    public EmulatedEngine engine() {
        return engine;
    }

    @Override
    public EngineStats stats() {
        return engine.stats();
    }

    /** The most recent fault descriptions (newest last, at most 64): what failed a WQE, and why. */
    public List<String> faults() {
        synchronized (faults) {
            return new ArrayList<>(faults);
        }
    }

    /** Called by the engine thread too: its own lock, so it never waits on a set-up call holding the NIC's. */
    void recordFault(String description) {
        synchronized (faults) {
            if (faults.size() == MAX_FAULTS) {
                faults.removeFirst();
            }
            faults.addLast(description);
        }
    }

    EmulatedPlatform platform() {
        return platform;
    }

    EmulatedQp[] qpSnapshot() {
        return qps;
    }

    RegistrationTable table() {
        return table;
    }

    /** The QP at {@code address}: on this NIC or on another emulated NIC of this process. */
    EmulatedQp findQp(QpAddress address) {
        EmulatedNic owner = FABRIC.get(address.device());
        if (owner == null) {
            throw new NicException("cannot connect to " + address + ": no emulated NIC of this process is called "
                    + address.device() + " (closed, or in another process: use createQpToProcess)");
        }
        return owner.ownQp(address);
    }

    private synchronized EmulatedQp ownQp(QpAddress address) {
        for (EmulatedQp qp : open) {
            if (qp.qpn() == address.qpn()) {
                return qp;
            }
        }
        throw new NicException("cannot connect to " + address + ": no such QP (closed?)");
    }

    /** Removes a closing QP from the engine, waits until the engine cannot hold it, drains and frees it. */
    void release(EmulatedQp qp) {
        synchronized (this) {
            if (!open.remove(qp)) {
                return;
            }
            qps = open.toArray(new EmulatedQp[0]);
        }
        awaitEnginePasses(2);
        try {
            qp.executor.drain();
        } finally {
            try {
                qp.executor.close();
            } finally {
                try {
                    qp.rings.close();
                } finally {
                    if (qp.deviceRingMemory != null) {
                        qp.deviceRingMemory.close();
                    }
                }
            }
        }
    }

    /** Waits until the engine thread has begun and finished a pass after now (no-op without a thread). */
    void awaitEnginePasses(int count) {
        if (thread == null || !thread.isAlive() || Thread.currentThread() == thread) {
            return;
        }
        long goal = engine.passes() + count;
        long deadline = System.nanoTime() + QUIESCE_TIMEOUT_NANOS;
        while (engine.passes() < goal && thread.isAlive()) {
            if (System.nanoTime() - deadline > 0) {
                throw new NicException("the emulated NIC's engine did not finish a pass within 10 s; cannot free a QP"
                        + " it may still be using");
            }
            Thread.onSpinWait();
        }
    }

    /**
     * Stops the engine thread (WQEs rung later are not executed) and waits for everything already queued; the
     * IBGDA transport calls it when a world starts closing, before any heap is freed.
     */
    public void quiesce() {
        stopEngine();
        EmulatedQp[] current;
        synchronized (this) {
            current = qps;
        }
        RuntimeException first = null;
        for (EmulatedQp qp : current) {
            try {
                qp.executor.drain();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private void stopEngine() {
        Thread t;
        synchronized (this) {
            t = thread;
            running = false;
        }
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        FABRIC.remove(deviceName, this);
        stopEngine();
        RuntimeException first = null;
        List<EmulatedQp> toClose;
        synchronized (this) {
            toClose = new ArrayList<>(open);
        }
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (RuntimeException e) {
                first = collect(first, e);
            }
        }
        for (Registration r : table.all()) {
            table.remove(r);
        }
        try {
            platform.close();
        } catch (RuntimeException e) {
            first = collect(first, e);
        }
        if (first != null) {
            throw first;
        }
    }

    private static RuntimeException collect(RuntimeException first, RuntimeException e) {
        if (first == null) {
            return e;
        }
        first.addSuppressed(e);
        return first;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException(deviceName + " is closed");
        }
    }

    @Override
    public String toString() {
        return description() + ", QPs " + Arrays.toString(qps);
    }
}

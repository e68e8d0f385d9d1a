package io.gda4j.samples.moe;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.cuda.ModuleImage;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.time.Duration;

/**
 * Holds the streams of every rank a process drives at one point until the host has queued a whole timed step on all
 * of them, so the step's events time the GPU's work and not the host's launches. One process launches its ranks one
 * after the other: without the gate, rank 0's receive half starts its clock while the host is still launching rank
 * 1's sends (on one H100 with 2 ranks, a low-latency dispatch of one token measured 0.17 ms that way and 0.03 ms
 * behind the gate). The gate is a one-thread kernel ({@value #KERNEL} in {@value #RESOURCE}, from
 * {@code samples/kernels/launch_gate.cu}) polling a word of mapped pinned host memory (portable, so every context of
 * the process sees it) that {@link #open()} raises.
 *
 * <p>Where the world spans processes, each process opens its own gate whenever it has queued its step, and the
 * processes' launches are apart by far more than a step lasts (4 processes under torchrun: a low-latency dispatch
 * measured 0.220 ms, 0.042 in one process). So there the gate kernel is also a start line on the GPUs
 * ({@value #START_LINE_KERNEL}): behind the host word, each rank adds 1 to a word in every peer's heap and waits
 * until its own word has counted every peer's gate of this step (bounded by the world's wait timeout). Every rank's
 * step then starts within a signal's flight of the last rank's, however late that rank's process queued it. The line
 * is one kernel because a kernel per signal and one for the wait let each boundary skew the ranks by a launch: on 2x
 * H100 that added 2-3 us to a low-latency dispatch (0.020 / 0.031 ms at 1 / 128 tokens in two processes, 0.018 /
 * 0.028 in one and in two with the one kernel).
 *
 * <p>The host-word kernel gives up after {@link #TIMEOUT}: a profiler that runs each kernel to its end before the host
 * goes on (ncu) would otherwise wait forever, and a {@link #hold} whose {@link #open()} never comes (queuing the step
 * failed) costs that long and no more. Still, open in a {@code finally}.
 */
final class LaunchGate implements AutoCloseable {
    /** The gate kernel's module, a class-path resource of this module. */
    static final String RESOURCE = "io/gda4j/samples/launch_gate.ptx";
    static final String KERNEL = "launch_gate";
    /** The gate and the start line in one kernel, for worlds that span processes. */
    static final String START_LINE_KERNEL = "launch_gate_start_line";
    /** Far above the host's time to queue a step (a few launches per rank), far below a test's patience. */
    static final Duration TIMEOUT = Duration.ofMillis(250);
    /** One GPU L2 line, so no other host data shares the line the kernels poll. */
    private static final long BYTES = 128;
    /** Where the start line's kernels write their status (int) and last seen value (long) on each local rank. */
    private static final long STATUS_OFFSET = 0;
    private static final long SEEN_OFFSET = 8;

    private final World world;
    private final ModuleImage image;
    private final MappedHostMemory word;
    /** The start line's word in every rank's heap (peers add to it); null in a world of one process. */
    private final HeapBuffer arrivals;
    /** By rank, for local ranks: the start line kernels' status and seen words; null in a world of one process. */
    private final DeviceMemory[] status;
    private long opened;

    /**
     * A gate for the ranks {@code world} drives here. In a world of several processes every process constructs its
     * gate at the same point (it takes a heap word, clears it and meets the others in a barrier); construct it while
     * no kernel of this process runs (it may load modules and allocates).
     */
    LaunchGate(World world) {
        this.world = world;
        this.image = ModuleImage.classPathResource(RESOURCE, LaunchGate.class.getClassLoader());
        world.loadModules(image);
        boolean spread = spansProcesses(world);
        this.word = world.localRanks().get(0).context().allocateMappedHost(BYTES);
        HeapBuffer line = null;
        DeviceMemory[] st = null;
        try {
            if (spread) {
                line = world.heap().allocateSignals(1);
                st = new DeviceMemory[world.size()];
                for (Rank r : world.localRanks()) {
                    st[r.rank()] = r.context().allocate(16);
                    st[r.rank()].fill((byte) 0);
                    r.fillHeap(line.offset(), 8, (byte) 0);
                }
                // No peer may add to a word before its owner has cleared it.
                world.barrier();
            }
        } catch (RuntimeException e) {
            closeAll(st);
            word.close();
            throw e;
        }
        this.arrivals = line;
        this.status = st;
    }

    /** Whether some rank of {@code world} lives in another process: the gate then adds the start line. */
    static boolean spansProcesses(World world) {
        return world.localRanks().size() < world.size();
    }

    /**
     * Work queued on {@code rank}'s stream after this waits until the next {@link #open()} (or the timeout) and, in a
     * world of several processes, until every rank's gate of this step has opened.
     */
    void hold(Rank rank) {
        long step = opened + 1;
        KernelArgs args = KernelArgs.create().pointer(word.devicePointer()).u64(step).u64(TIMEOUT.toNanos());
        if (arrivals == null) {
            rank.kernel(image, KERNEL).launch(1, 1, 0, rank.stream(), args);
            return;
        }
        DeviceMemory st = status[rank.rank()];
        rank.kernel(image, START_LINE_KERNEL).launch(1, 1, 0, rank.stream(), args.pointer(rank.deviceView())
                .i64(arrivals.offset()).pointer(st.pointer().plusBytes(STATUS_OFFSET))
                .pointer(st.pointer().plusBytes(SEEN_OFFSET)));
    }

    /** Releases every stream held since the last open. */
    void open() {
        opened++;
        word.putLongRelease(0, opened);
    }

    /**
     * Throws when a start line kernel of a local rank returned an error status (a wait past the world's timeout also
     * leaves a device error record, which the world's checkErrors reports first). Call it with the streams idle.
     */
    void checkStartLine() {
        if (status == null) {
            return;
        }
        for (Rank r : world.localRanks()) {
            int st = (int) status[r.rank()].readLong(STATUS_OFFSET);
            if (st != 0) {
                throw new IllegalStateException("rank " + r.rank() + ": the timing's start line (a signal to every peer,"
                        + " then a wait for theirs) returned device status " + st);
            }
        }
    }

    /**
     * Waits for the streams of every local rank (the ones {@link #hold} may have held: nothing may still wait on the
     * word or write the status words), then frees the word, even when a wait throws.
     */
    @Override
    public void close() {
        try {
            for (Rank r : world.localRanks()) {
                r.synchronize();
            }
        } finally {
            try {
                closeAll(status);
            } finally {
                word.close();
            }
        }
    }

    private static void closeAll(DeviceMemory[] memory) {
        if (memory == null) {
            return;
        }
        for (DeviceMemory m : memory) {
            if (m != null) {
                m.close();
            }
        }
    }
}

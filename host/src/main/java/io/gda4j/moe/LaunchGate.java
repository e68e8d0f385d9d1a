package io.gda4j.moe;

import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.time.Duration;

/**
 * Holds the streams of every rank a process drives at one point until the host has queued a whole timed step on all
 * of them, so the step's events time the GPU's work and not the host's launches. One process launches its ranks one
 * after the other: without the gate, rank 0's receive half starts its clock while the host is still launching rank
 * 1's sends (on one H100 with 2 ranks, a low-latency dispatch of one token measured 0.17 ms that way and 0.03 ms
 * behind the gate). The gate is a one-thread kernel ({@code gda4j_moe_ll_gate}) polling a word of mapped pinned host
 * memory (portable, so every context of the process sees it) that {@link #open()} raises.
 *
 * <p>The kernel gives up after {@link #TIMEOUT}: a profiler that runs each kernel to its end before the host goes
 * on (ncu) would otherwise wait forever, and a {@link #hold} whose {@link #open()} never comes (queuing the step
 * failed) costs that long and no more. Still, open in a {@code finally}.
 */
final class LaunchGate implements AutoCloseable {
    /** Far above the host's time to queue a step (a few launches per rank), far below a test's patience. */
    static final Duration TIMEOUT = Duration.ofMillis(250);
    /** One GPU L2 line, so no other host data shares the line the kernels poll. */
    private static final long BYTES = 128;

    private final MappedHostMemory word;
    private long opened;

    LaunchGate(World world) {
        this.word = world.localRanks().get(0).context().allocateMappedHost(BYTES);
    }

    /** Work queued on {@code rank}'s stream after this waits until the next {@link #open()} (or the timeout). */
    void hold(Rank rank) {
        Kernel gate = rank.kernel(MoeLowLatencyBuffer.MODULE, "gda4j_moe_ll_gate");
        gate.launch(1, 1, 0, rank.stream(), KernelArgs.create().pointer(word.devicePointer()).u64(opened + 1)
                .u64(TIMEOUT.toNanos()));
    }

    /** Releases every stream held since the last open. */
    void open() {
        opened++;
        word.putLongRelease(0, opened);
    }

    /** Frees the word; the streams it held must be done with it (synchronise them first). */
    @Override
    public void close() {
        word.close();
    }
}

package io.gda4j.moe;

import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.world.World;

/**
 * Holds the streams of every rank a process drives at one point until the host has queued a whole timed step on all
 * of them, so the step's events time the GPU's work and not the host's launches. One process launches its ranks one
 * after the other: without the gate, rank 0's receive half starts its clock while the host is still launching rank
 * 1's sends (on one H100 with 2 ranks, a low-latency call of one token took 0.17 ms that way, nearly all of it the
 * other rank's launches). The gate is a stream wait on a word of mapped pinned host memory (portable, so every
 * context of the process sees it); {@link #open()} raises the word.
 *
 * <p>Every {@link #hold} must be followed by {@link #open()}, also when queuing the step fails: a held stream waits
 * for the word forever. Use it as {@code try { hold...; queue...; } finally { gate.open(); }}.
 */
final class LaunchGate implements AutoCloseable {
    /** One GPU L2 line, so no other host data shares the line the streams poll. */
    private static final long BYTES = 128;

    private final MappedHostMemory word;
    private long opened;

    LaunchGate(World world) {
        this.word = world.localRanks().get(0).context().allocateMappedHost(BYTES);
    }

    /** Work queued on {@code stream} after this waits until the next {@link #open()}. */
    void hold(CudaStream stream) {
        stream.waitValue64AtLeast(word.devicePointer(), opened + 1);
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

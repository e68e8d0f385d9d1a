package io.gda4j.hostflag;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.cuda.PtxModule;
import io.gda4j.gdrcopy.HostWritableGpuWord;

import java.util.Objects;

/**
 * Host -> GPU -> host round trips through a {@link HostWritableGpuWord}: the host side of the kernel
 * {@value #ECHO_KERNEL} (module {@value #MODULE}, device-ptx/kernels/hostflag.cu). One GPU thread waits until the
 * flag reaches round i ({@code ld.acquire.sys}), then answers by storing i into the echo word in mapped pinned host
 * memory ({@code st.release.sys}); {@link #roundTripNanos()} stores i with {@code putLongRelease} and spins on the
 * echo with {@code getLongAcquire}. Behind {@code gda4j hostflag}, and the GPU tests.
 *
 * <p>The reply block, pinned host memory mapped into the GPU; the kernel writes all three words:
 * <pre>
 *   0         8         16        24 .. 64
 *   +---------+---------+---------+-------+
 *   | echo    | status  | seen    |       |
 *   +---------+---------+---------+-------+
 * </pre>
 * echo: the last round answered. status: {@link #STATUS_RUNNING} until the kernel exits, then its status, released
 * after everything else. seen: the last flag value the kernel read.
 *
 * <p>Never hangs: the kernel gives up after {@code timeoutNanos} without the next round (status
 * {@link #STATUS_TIMEOUT}), and the host gives up waiting for an echo once the kernel has stopped, or after the
 * timeout plus a second. Not thread-safe: one thread drives the round trips.
 */
public final class FlagEcho implements AutoCloseable {

    /** The PTX module of the host-flag kernels. */
    public static final String MODULE = "hostflag";
    /** The round-trip kernel. */
    public static final String ECHO_KERNEL = "gda4j_flag_echo";
    /** The kernel that records every value the flag takes (tests). */
    public static final String OBSERVE_KERNEL = "gda4j_flag_observe";

    /** Kernel status while it runs; the host writes it before the launch. */
    public static final long STATUS_RUNNING = 1;
    /** The kernel did all it was asked ({@code gda4j::OK}). */
    public static final long STATUS_OK = 0;
    /** The flag did not move on within the timeout ({@code gda4j::ERR_TIMEOUT}). */
    public static final long STATUS_TIMEOUT = -1;
    /** gda4j_flag_observe saw more values than its array holds ({@code gda4j::ERR_RANGE}). */
    public static final long STATUS_OVERFLOW = -3;
    /** The kernel saw {@link #FLAG_STOP} and returned early ({@code STATUS_STOPPED} in hostflag.cu). */
    public static final long STATUS_STOPPED = 2;
    /** A flag value that makes gda4j_flag_echo return at once (all ones: {@code ~0ull} on the GPU). */
    public static final long FLAG_STOP = -1L;

    static final int ECHO_OFFSET = 0;
    static final int STATUS_OFFSET = 8;
    static final int SEEN_OFFSET = 16;
    static final int REPLY_BYTES = 64;

    /** Host polls between looks at the kernel's status and the clock (both cost more than a poll). */
    private static final int SPINS_PER_CHECK = 1024;
    /** The host waits this much longer than the kernel would, so the kernel's own timeout is what it reports. */
    private static final long HOST_GRACE_NANOS = 1_000_000_000L;

    private final HostWritableGpuWord flag;
    private final PtxModule module;
    private final CudaStream stream;
    private final MappedHostMemory reply;
    private final long rounds;
    private final long timeoutNanos;
    private long next = 1;
    private boolean finished;
    private boolean closed;

    private FlagEcho(HostWritableGpuWord flag, PtxModule module, CudaStream stream, MappedHostMemory reply,
            long rounds, long timeoutNanos) {
        this.flag = flag;
        this.module = module;
        this.stream = stream;
        this.reply = reply;
        this.rounds = rounds;
        this.timeoutNanos = timeoutNanos;
    }

    /**
     * Launches {@value #ECHO_KERNEL} on a stream of its own for rounds 1 .. {@code rounds}. The flag must hold a
     * value below 1 (a fresh word holds 0); it must be reachable from {@code context}'s GPU.
     *
     * @param timeoutNanos how long the kernel waits for each round before giving up
     */
    public static FlagEcho start(CudaContext context, HostWritableGpuWord flag, long rounds, long timeoutNanos) {
        Objects.requireNonNull(flag, "flag");
        if (rounds <= 0) {
            throw new IllegalArgumentException("rounds must be positive, got " + rounds);
        }
        if (timeoutNanos <= 0) {
            throw new IllegalArgumentException("timeoutNanos must be positive, got " + timeoutNanos);
        }
        long current = flag.getLongAcquire();
        if (current != 0) {
            throw new IllegalArgumentException("the flag holds " + current + "; round trips count up from 1, so it "
                    + "must start at 0: use a fresh word");
        }
        PtxModule module = context.loadModule(MODULE);
        CudaStream stream = null;
        MappedHostMemory reply = null;
        try {
            stream = context.createStream();
            reply = context.allocateMappedHost(REPLY_BYTES);
            reply.putLongRelease(STATUS_OFFSET, STATUS_RUNNING);
            DevicePointer base = reply.devicePointer();
            module.function(ECHO_KERNEL).launch(1, 1, 0, stream, echoArguments(flag.deviceAddress(), base, 1, rounds,
                    timeoutNanos));
            return new FlagEcho(flag, module, stream, reply, rounds, timeoutNanos);
        } catch (RuntimeException e) {
            for (AutoCloseable c : new AutoCloseable[] {reply, stream, module}) {
                closeAfterFailure(e, c);
            }
            throw e;
        }
    }

    /** The arguments of {@value #ECHO_KERNEL}, in its parameter order. */
    static KernelArgs echoArguments(long flagAddress, DevicePointer reply, long first, long count, long timeoutNanos) {
        return KernelArgs.create().address(flagAddress).pointer(reply.plusBytes(ECHO_OFFSET)).u64(first).u64(count)
                .u64(timeoutNanos).pointer(reply.plusBytes(SEEN_OFFSET)).pointer(reply.plusBytes(STATUS_OFFSET));
    }

    /**
     * The next round: stores its number into the flag, spins until the GPU echoes it, and returns the time that took
     * on this thread's {@link System#nanoTime()} clock. Allocation-free.
     *
     * @throws IllegalStateException when every round is done, or the kernel stopped or stopped answering (the message
     *                               says which round, and what the kernel last saw)
     */
    public long roundTripNanos() {
        if (next > rounds || closed) {
            throw new IllegalStateException(closed ? "this FlagEcho is closed"
                    : "all " + rounds + " rounds are done: start a new FlagEcho");
        }
        final long value = next;
        final long start = System.nanoTime();
        flag.putLongRelease(value);
        int spins = 0;
        // A bare spin (no Thread.onSpinWait): its pause would add to every measured round trip.
        while (reply.getLongAcquire(ECHO_OFFSET) != value) {
            if (++spins == SPINS_PER_CHECK) {
                spins = 0;
                checkStillAnswering(value, start);
            }
        }
        long elapsed = System.nanoTime() - start;
        next++;
        return elapsed;
    }

    private void checkStillAnswering(long value, long start) {
        long status = reply.getLongAcquire(STATUS_OFFSET);
        if (status != STATUS_RUNNING) {
            throw new IllegalStateException("the GPU stopped answering at round " + value + " of " + rounds + " ("
                    + flag.backendName() + " flag): " + describeStatus(status, reply.getLong(SEEN_OFFSET), value));
        }
        if (System.nanoTime() - start > timeoutNanos + HOST_GRACE_NANOS) {
            throw new IllegalStateException("no echo of round " + value + " of " + rounds + " (" + flag.backendName()
                    + " flag) within " + (timeoutNanos + HOST_GRACE_NANOS) / 1_000_000 + " ms, and the kernel "
                    + "reports nothing: is the GPU busy with other work, so the kernel never started?");
        }
    }

    /** Rounds not yet done. */
    public long roundsLeft() {
        return rounds - next + 1;
    }

    /** The kernel's status word now ({@link #STATUS_RUNNING} while it runs). */
    public long status() {
        return reply.getLongAcquire(STATUS_OFFSET);
    }

    /**
     * Waits for the kernel to exit after the last round and checks that it finished cleanly.
     *
     * @throws IllegalStateException when rounds are left, or the kernel's status is not {@link #STATUS_OK}
     */
    public void finish() {
        if (roundsLeft() > 0) {
            throw new IllegalStateException(roundsLeft() + " rounds are left: the kernel would wait for them until it "
                    + "times out; close() stops it early");
        }
        stream.synchronize();
        finished = true;
        long status = reply.getLongAcquire(STATUS_OFFSET);
        if (status != STATUS_OK) {
            throw new IllegalStateException("the echo kernel ended with " + describeStatus(status,
                    reply.getLong(SEEN_OFFSET), rounds));
        }
    }

    /**
     * Stops the kernel if it still runs (stores {@link #FLAG_STOP} into the flag, which stays there), waits for it,
     * and frees the stream, reply block and module. The flag itself belongs to the caller. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        try {
            if (!finished) {
                if (reply.getLongAcquire(STATUS_OFFSET) == STATUS_RUNNING) {
                    flag.putLongRelease(FLAG_STOP);
                }
                stream.synchronize();
            }
        } catch (RuntimeException e) {
            failure = e;
        }
        for (AutoCloseable c : new AutoCloseable[] {reply, stream, module}) {
            try {
                c.close();
            } catch (Exception e) {
                RuntimeException r = e instanceof RuntimeException
                        ? (RuntimeException) e : new IllegalStateException(e);
                if (failure == null) {
                    failure = r;
                } else {
                    failure.addSuppressed(r);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * A kernel status in words, e.g. {@code "timed out: the flag stayed at 3 while round 4 was awaited"}.
     *
     * @param seen   the last flag value the kernel read
     * @param wanted the round it was waiting for
     */
    public static String describeStatus(long status, long seen, long wanted) {
        if (status == STATUS_OK) {
            return "ok";
        }
        if (status == STATUS_RUNNING) {
            return "still running";
        }
        if (status == STATUS_TIMEOUT) {
            return "timed out: the flag stayed at " + seen + " while round " + wanted + " was awaited, so the host's "
                    + "store did not reach the GPU in time";
        }
        if (status == STATUS_OVERFLOW) {
            return "the array of observed values filled up";
        }
        if (status == STATUS_STOPPED) {
            return "stopped early by the host";
        }
        return "unknown status " + status;
    }

    @Override
    public String toString() {
        return "FlagEcho[" + flag.backendName() + " flag, round " + next + " of " + rounds
                + (closed ? ", closed" : "") + "]";
    }

    private static void closeAfterFailure(RuntimeException failure, AutoCloseable resource) {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (Exception e) {
            failure.addSuppressed(e);
        }
    }
}

package io.gda4j.samples;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.PtxModule;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.Rank;
import io.gda4j.world.Scope;
import io.gda4j.world.World;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Device-side ping-pong between two ranks (kernel {@code gda4j_pingpong}): the measuring rank sends round i and
 * waits for the echo; the peer waits and echoes. Each round trip is timed on the GPU with %globaltimer, so the
 * numbers contain no launch or host overhead.
 *
 * <p>In a multi-process world each process drives the ranks it holds: it resets and launches only those, and a host
 * barrier between the resets and the launches keeps one process's reset from wiping the other's first round. Only
 * the process of the measuring rank gets statistics.
 */
final class PingPong implements AutoCloseable {
    /**
     * The benchmark kernels (bench.cu). Its build leaves out a back end that costs the direct path registers; a
     * transport so left out has a build of its own, {@code bench_<name>} (bench_ibgda.cu).
     */
    static final String MODULE = "bench";
    /** Device status of a ping-pong whose inline payload arrived altered (bench.cu ERR_PAYLOAD). */
    static final int ERR_PAYLOAD = -100;
    /** The inline slot carries at most this many bytes. */
    static final long INLINE_BYTES = 8;
    /** The put_signal kernels with the payload check are the unchecked ones' names with this ending (bench.cu). */
    static final String CHECKED_SUFFIX = "_checked";

    /** What one round sends; each mode (and scope) has its own kernel in bench.cu. */
    enum Mode {
        /** a bare 64-bit signal (relaxed store), waited for with wait_until */
        SIGNAL("signal"),
        /** SIZE bytes then a release signal, waited for with wait_until */
        PUT_SIGNAL("put_signal"),
        /** 8 bytes inside a 16-byte slot with the round number in each half, waited for with wait_inline */
        PUT_INLINE("put_inline");

        final String label;

        Mode(String label) {
            this.label = label;
        }

        /** The kernel of this mode; put_signal has one per scope. */
        String kernel(Scope scope) {
            return "gda4j_pingpong_" + label + (this == PUT_SIGNAL ? "_" + scope.label() : "");
        }

        static Mode parse(String text) {
            for (Mode m : values()) {
                if (m.label.equalsIgnoreCase(text.trim())) {
                    return m;
                }
            }
            throw new UsageException("unknown mode '" + text + "': use signal, put_signal, put_inline or fifo (proxy)");
        }
    }

    private final World world;
    /** The measuring rank and its peer, each null when another process drives it. */
    private final Rank rank;
    private final Rank peer;
    private final HeapBuffer data;
    private final HeapBuffer src;
    private final HeapBuffer signal;
    private final DeviceMemory rtt;
    private final int maxIterations;
    /** The pair's rank numbers, known in every process (also one that drives neither and only meets the barrier). */
    private final int rankNumber;
    private final int peerNumber;
    /** Runs so far: the payload seeds' salt, so no run's payload is an earlier run's left in a buffer. */
    private long salt;

    /** The benchmark module for this pair: the build of its own of a transport that bench.cu leaves out. */
    static String module(World world, int rank, int peer) {
        String own = MODULE + "_" + world.transport(rank, peer).label();
        return PtxModule.isShipped(own) ? own : MODULE;
    }

    PingPong(World world, int rank, int peer, long maxBytes, int maxIterations) {
        this.world = world;
        this.rankNumber = rank;
        this.peerNumber = peer;
        this.rank = world.localRank(rank).orElse(null);
        this.peer = world.localRank(peer).orElse(null);
        this.maxIterations = maxIterations;
        // Two halves each: the checked put_signal alternates between them (bench.cu), the unchecked uses the first.
        this.data = world.heap().allocate(2 * stride(maxBytes));
        this.src = world.heap().allocate(2 * stride(maxBytes));
        this.signal = world.heap().allocateSignals(1);
        this.rtt = this.rank == null ? null : this.rank.context().allocate(4L * maxIterations);
        // Both ranks' kernels are loaded before either runs: with both ranks on one GPU, a load behind the
        // responder's spinning kernel would be refused (it could never finish).
        world.loadModules(module(world, rank, peer), module(world, peer, rank));
    }

    /** Heap bytes a ping-pong of up to {@code maxBytes} needs. */
    static long heapBytes(long maxBytes) {
        return 4 * stride(maxBytes) + 2 * 256 + 4096;
    }

    /** The distance between the two halves of a buffer for {@code bytes}: 256-byte aligned, as the heap's are. */
    static long stride(long bytes) {
        return (Math.max(bytes, 16) + 255) & -256L;
    }

    /**
     * Runs warm-up plus {@code iterations} round trips; returns their statistics, or null in a process that does not
     * drive the measuring rank. {@code check} (put_signal only): every round's payload is compared by its receiver
     * ({@link PayloadCheck}); a payload that differs fails the run with {@link PayloadCheck.MismatchException}, in
     * every process of the world.
     */
    LatencyStats run(Mode mode, long bytes, Scope scope, int blockThreads, int warmup, int iterations, boolean check) {
        boolean checked = check && mode == Mode.PUT_SIGNAL;
        if (iterations > maxIterations) {
            throw new IllegalArgumentException("at most " + maxIterations + " iterations");
        }
        // The responder first, so that it is already spinning when round 1 arrives.
        List<Rank> local = new ArrayList<>();
        for (Rank r : new Rank[] {peer, rank}) {
            if (r != null) {
                local.add(r);
            }
        }
        // Fresh signal words (and inline slot) each run: rounds count up from 1 again.
        for (Rank r : local) {
            r.writeHeapLong(signal.word(0), 0);
            r.writeHeapLong(signal.word(1), 0);
            r.scratch().writeLong(0, 0);
            if (checked) {
                PayloadCheck.reset(r.scratch());
            }
        }
        salt++; // both processes count runs alike: the seeds of this run differ from every earlier one's
        world.barrier();
        int threads = mode == Mode.PUT_SIGNAL ? scope.launchThreads(blockThreads) : 1;
        // Before any launch: a responder already spinning would wait out the world's timeout for a partner whose
        // launch failed.
        for (Rank r : local) {
            Kernel k = kernel(r, r == rank ? peerNumber : rankNumber, mode, scope, checked);
            if (threads > k.maxThreadsPerBlock()) {
                throw new IllegalArgumentException(scope.name().toLowerCase(Locale.ROOT) + " " + mode.name()
                        .toLowerCase(Locale.ROOT) + " ping-pong of " + threads + " threads: its kernel ("
                        + k.name() + ") takes at most " + k.maxThreadsPerBlock() + " threads a block on GPU "
                        + r.device().ordinal() + " (registers); pass --block-threads " + k.maxThreadsPerBlock()
                        + " or less");
            }
        }
        for (Rank r : local) {
            boolean initiator = r == rank;
            launch(r, initiator ? peerNumber : rankNumber, mode, bytes, scope, threads, warmup, iterations, initiator,
                    checked);
        }
        for (Rank r : local) {
            r.synchronize();
        }
        world.checkErrors();
        for (Rank r : local) {
            checkStatus(r);
        }
        if (checked) {
            List<PayloadCheck.Result> mine = new ArrayList<>();
            for (Rank r : local) {
                mine.add(PayloadCheck.Result.read(r.rank(), r.scratch()));
            }
            PayloadCheck.requireIntact(PayloadCheck.gather(world, mine), mode.label + " " + scope.label()
                    + "-scope payloads", bytes, receiver -> receiver == rankNumber ? peerNumber : rankNumber);
        }
        if (rank == null) {
            return null;
        }
        int[] nanos = new int[iterations];
        byte[] raw = new byte[4 * iterations];
        rtt.copyToHost(0, raw, 0, raw.length);
        java.nio.ByteBuffer.wrap(raw).order(java.nio.ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(nanos);
        return LatencyStats.of(nanos, iterations);
    }

    private void launch(Rank r, int to, Mode mode, long bytes, Scope scope, int threads, int warmup, int iterations,
                        boolean initiator, boolean checked) {
        KernelArgs args = KernelArgs.create()
                .pointer(r.deviceView()).i32(to).i64(data.offset()).i64(src.offset()).i64(bytes)
                .i64(signal.word(0)).i64(1).u32(warmup).u32(iterations).i32(initiator ? 1 : 0)
                // Only the initiator writes round-trip times; the responder may run where rtt does not exist.
                .pointer(initiator ? rtt.pointer() : DevicePointer.of(0)).pointer(r.scratch().pointer());
        if (checked) {
            args.i64(stride(bytes)).i64(salt).pointer(r.scratch().pointer().plusBytes(PayloadCheckDescriptor.RECORD_OFFSET));
        }
        kernel(r, to, mode, scope, checked).launch(1, threads, 0, r.stream(), args);
    }

    private Kernel kernel(Rank r, int to, Mode mode, Scope scope, boolean checked) {
        return r.kernel(module(world, r.rank(), to), mode.kernel(scope) + (checked ? CHECKED_SUFFIX : ""));
    }

    private static void checkStatus(Rank r) {
        int st = (int) r.scratch().readLong(0);
        if (st == ERR_PAYLOAD) {
            throw new IllegalStateException("rank " + r.rank() + " received an inline payload that differs from what was sent");
        }
        if (st != 0) {
            throw new IllegalStateException("ping-pong on rank " + r.rank() + " ended with device status " + st);
        }
    }

    @Override
    public void close() {
        if (rtt != null) {
            rtt.close();
        }
    }
}

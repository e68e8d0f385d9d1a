package io.gda4j.world;

import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.transport.Transport;

/**
 * Single device API calls launched from the host, one kernel each (module {@code ops}): a put, a signal, a wait.
 * For set-up, tests and checks, not for speed: each call launches, waits for the kernel and checks the error
 * record. Arguments are validated on the host first, so an out-of-range offset never reaches a kernel.
 */
public final class DeviceOps {
    /** The module of these kernels ({@code io/gda4j/ptx/ops.ptx}), for callers that queue them without waiting. */
    public static final String MODULE = "ops";
    /** Threads of a block-scope launch. */
    public static final int BLOCK_THREADS = 256;

    private static final int STATUS_OFFSET = 0;
    private static final int SEEN_OFFSET = 8;

    private final World world;

    /** Loads the {@code ops} module on every GPU of the world now, so no later call has to (see World.loadModules). */
    public DeviceOps(World world) {
        this.world = world;
        world.loadModules(MODULE);
    }

    /** put from {@code rank}'s heap at {@code srcOffset} to {@code peer}'s heap at {@code dstOffset}. */
    public void put(int rank, int peer, long dstOffset, long srcOffset, long bytes, Scope scope) {
        launchPut(rank, peer, dstOffset, srcOffset, bytes, scope, false, 0, SignalOp.SET, 0);
    }

    /** put then signal, the signal released after the data. */
    public void putSignal(int rank, int peer, long dstOffset, long srcOffset, long bytes, Scope scope,
                          long signalOffset, SignalOp op, long value) {
        checkSignalOffset("signal", signalOffset);
        launchPut(rank, peer, dstOffset, srcOffset, bytes, scope, true, signalOffset, op, value);
    }

    /** One signal from one thread of {@code rank} to {@code peer}'s word at {@code signalOffset}. */
    public void signal(int rank, int peer, long signalOffset, SignalOp op, long value) {
        Rank r = validate(rank, peer);
        checkSignalOffset("signal", signalOffset);
        resetStatus(r);
        r.kernel(MODULE, "gda4j_op_signal").launch(1, 1, 0, r.stream(), KernelArgs.create()
                .pointer(r.deviceView()).i32(peer).i64(signalOffset).u32(op.code()).i64(value).pointer(status(r)));
        finish(r);
    }

    /** fence(peer) then a relaxed signal, from one thread: the release pattern for a bare signal. */
    public void fenceThenSignal(int rank, int peer, long signalOffset, SignalOp op, long value) {
        Rank r = validate(rank, peer);
        checkSignalOffset("signal", signalOffset);
        resetStatus(r);
        r.kernel(MODULE, "gda4j_op_fence_signal").launch(1, 1, 0, r.stream(), KernelArgs.create()
                .pointer(r.deviceView()).i32(peer).i64(signalOffset).u32(op.code()).i64(value).pointer(status(r)));
        finish(r);
    }

    /** put_inline: {@code value} into {@code peer}'s 16-byte slot at {@code slotOffset}, tagged with {@code seq}. */
    public void putInline(int rank, int peer, long slotOffset, long value, int seq) {
        Rank r = validate(rank, peer);
        checkSlotOffset(slotOffset);
        resetStatus(r);
        r.kernel(MODULE, "gda4j_op_put_inline").launch(1, 1, 0, r.stream(), KernelArgs.create()
                .pointer(r.deviceView()).i32(peer).i64(slotOffset).i64(value).u32(seq).pointer(status(r)));
        finish(r);
    }

    /** wait_inline on {@code rank}'s slot until it carries {@code seq}; returns the 8-byte payload. */
    public long waitInline(int rank, long slotOffset, int seq) {
        Rank r = world.rank(rank);
        checkSlotOffset(slotOffset);
        resetStatus(r);
        r.kernel(MODULE, "gda4j_op_wait_inline").launch(1, 1, 0, r.stream(), KernelArgs.create()
                .pointer(r.deviceView()).i64(slotOffset).u32(seq)
                .pointer(r.scratch().pointer().plusBytes(SEEN_OFFSET)).pointer(status(r)));
        finish(r);
        return r.scratch().readLong(SEEN_OFFSET);
    }

    /**
     * {@code blocks x threads} GPU threads each add {@code value} to {@code peer}'s word {@code perThread} times:
     * the word grows by exactly {@code blocks * threads * perThread * value} or the atomics are broken.
     */
    public void signalAddFromGrid(int rank, int peer, long signalOffset, long value, int blocks, int threads, int perThread) {
        Rank r = validate(rank, peer);
        checkSignalOffset("signal", signalOffset);
        if (blocks <= 0 || threads <= 0 || threads > 1024 || perThread < 0) {
            throw new IllegalArgumentException("need blocks > 0, 0 < threads <= 1024, perThread >= 0; got "
                    + blocks + ", " + threads + ", " + perThread);
        }
        resetStatus(r);
        r.kernel(MODULE, "gda4j_op_signal_add").launch(blocks, threads, 0, r.stream(), KernelArgs.create()
                .pointer(r.deviceView()).i32(peer).i64(signalOffset).i64(value).u32(perThread).pointer(status(r)));
        finish(r);
    }

    /**
     * Spins on the GPU of {@code rank} until its word at {@code signalOffset} satisfies {@code cmp value}; returns the
     * value seen. Throws {@link DeviceWaitTimeoutException} after the world's wait timeout.
     */
    public long waitUntil(int rank, long signalOffset, Cmp cmp, long value) {
        Rank r = world.rank(rank);
        checkSignalOffset("signal", signalOffset);
        resetStatus(r);
        r.kernel(MODULE, "gda4j_op_wait_until").launch(1, 1, 0, r.stream(), KernelArgs.create()
                .pointer(r.deviceView()).i64(signalOffset).u32(cmp.code()).i64(value)
                .pointer(r.scratch().pointer().plusBytes(SEEN_OFFSET)).pointer(status(r)));
        finish(r);
        return r.scratch().readLong(SEEN_OFFSET);
    }

    /** flush(peer) from one thread of {@code rank}: returns when everything {@code rank} sent to {@code peer} is there. */
    public void flush(int rank, int peer) {
        Rank r = validate(rank, peer);
        resetStatus(r);
        r.kernel(MODULE, "gda4j_op_flush").launch(1, 1, 0, r.stream(), KernelArgs.create()
                .pointer(r.deviceView()).i32(peer).pointer(status(r)));
        finish(r);
    }

    /** quiet() from one thread of {@code rank}: everything it sent to any peer is complete. */
    public void quiet(int rank) {
        Rank r = world.rank(rank);
        resetStatus(r);
        r.kernel(MODULE, "gda4j_op_quiet").launch(1, 1, 0, r.stream(), KernelArgs.create()
                .pointer(r.deviceView()).pointer(status(r)));
        finish(r);
    }

    /**
     * Many puts from many warps at once, then one signal per warp: {@code table} holds {dst, src, bytes} triples,
     * {@code perWarp} consecutive ones per warp, so it sets the grid: table.length / 3 / perWarp warps, launched as
     * blocks of {@code warpsPerBlock} warps. Each warp adds 1 to {@code peer}'s word {@code counterOffset} after its
     * puts (fence, then a relaxed signal); each block flushes at the end, so everything has landed on return.
     */
    public void putMany(int rank, int peer, long[] table, int perWarp, int warpsPerBlock, long counterOffset) {
        Rank r = validate(rank, peer);
        checkSignalOffset("counter", counterOffset);
        if (perWarp <= 0 || warpsPerBlock <= 0 || warpsPerBlock > 32 || table.length % (3 * perWarp) != 0) {
            throw new IllegalArgumentException("need perWarp > 0, 0 < warpsPerBlock <= 32 and a table of whole warps of"
                    + " {dst, src, bytes} triples; got " + perWarp + ", " + warpsPerBlock + ", " + table.length + " longs");
        }
        int warps = table.length / 3 / perWarp;
        if (warps % warpsPerBlock != 0) {
            throw new IllegalArgumentException(warps + " warps do not fill blocks of " + warpsPerBlock);
        }
        for (int i = 0; i < table.length; i += 3) {
            world.heap().checkRange("put destination " + i / 3, table[i], table[i + 2]);
            world.heap().checkRange("put source " + i / 3, table[i + 1], table[i + 2]);
        }
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocateDirect(8 * table.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.asLongBuffer().put(table);
        try (io.gda4j.cuda.DeviceMemory t = r.context().allocate(8L * table.length)) {
            t.copyFromHost(0, b);
            resetStatus(r);
            r.kernel(MODULE, "gda4j_op_put_many").launch(warps / warpsPerBlock, 32 * warpsPerBlock, 0, r.stream(),
                    KernelArgs.create().pointer(r.deviceView()).i32(peer).pointer(t.pointer()).u32(perWarp)
                            .i64(counterOffset).pointer(status(r)));
            finish(r);
        }
    }

    private void launchPut(int rank, int peer, long dstOffset, long srcOffset, long bytes, Scope scope,
                           boolean withSignal, long signalOffset, SignalOp op, long value) {
        Rank r = validate(rank, peer);
        if (scope == null) {
            throw new IllegalArgumentException("scope is required: thread, warp or block");
        }
        world.heap().checkRange("put destination", dstOffset, bytes);
        world.heap().checkRange("put source", srcOffset, bytes);
        resetStatus(r);
        r.kernel(MODULE, "gda4j_op_put").launch(1, scope.launchThreads(BLOCK_THREADS), 0, r.stream(), KernelArgs.create()
                .pointer(r.deviceView()).i32(peer).i64(dstOffset).i64(srcOffset).i64(bytes).u32(scope.code())
                .i32(withSignal ? 1 : 0).i64(signalOffset).u32(op.code()).i64(value).pointer(status(r)));
        finish(r);
    }

    private Rank validate(int rank, int peer) {
        Rank r = world.rank(rank);
        r.checkPeer(peer);
        if (world.transport(rank, peer) == Transport.NONE) {
            throw new IllegalArgumentException("rank " + rank + " has no transport to peer " + peer);
        }
        return r;
    }

    private void checkSignalOffset(String what, long offset) {
        if ((offset & 7) != 0) {
            throw new IllegalArgumentException(what + " word at heap offset " + offset + " is not 8-byte aligned");
        }
        world.heap().checkRange(what + " word", offset, 8);
    }

    private void checkSlotOffset(long offset) {
        if ((offset & 15) != 0) {
            throw new IllegalArgumentException("inline slot at heap offset " + offset + " is not 16-byte aligned");
        }
        world.heap().checkRange("inline slot", offset, 16);
    }

    private static DevicePointer status(Rank r) {
        return r.scratch().pointer().plusBytes(STATUS_OFFSET);
    }

    private static void resetStatus(Rank r) {
        r.scratch().writeLong(STATUS_OFFSET, 0);
    }

    private void finish(Rank r) {
        r.synchronize();
        world.checkErrors();
        int status = (int) r.scratch().readLong(STATUS_OFFSET);
        if (status != 0) {
            throw new DeviceErrorException("rank " + r.rank() + ": device call returned status " + status
                    + " without an error record (the abort flag was raised elsewhere)", null);
        }
    }
}

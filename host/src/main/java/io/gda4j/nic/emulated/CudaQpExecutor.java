package io.gda4j.nic.emulated;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.Driver;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.KernelParameters;
import io.gda4j.mlx5.CqeDescriptor;

/**
 * One emulated QP's "wire": a CUDA stream of the posting GPU on which every WQE's work is queued in order.
 * WRITE/READ/inline payloads are {@code cuMemcpyAsync} (unified addressing: device, peer and mapped host memory
 * alike), 8-byte inline stores and CQE tails are {@code cuStreamWriteValue64} (which fences before the store, so a
 * CQE never overtakes the copies queued before it), atomics are the {@code gda4j_emulated_nic_atomic} kernel of
 * {@code kernels/emulated_nic.cu} (one thread). The engine thread is the only caller.
 *
 * <p>Allocation: the atomic kernel's parameters live in arrays built once and refilled per launch (the driver copies
 * them at launch); copies and stores allocate one small {@link DevicePointer} per address, which JCuda needs.
 */
final class CudaQpExecutor implements QpExecutor {
    static final String ATOMIC_KERNEL = "gda4j_emulated_nic_atomic";
    /**
     * How long the atomic kernel waits for a responder's atomic lock before it breaks it (a holder killed inside the
     * kernel never releases it): far beyond a held split (microseconds) even when time-sliced with other processes
     * (milliseconds per slice).
     */
    static final long LOCK_TIMEOUT_NANOS = 2_000_000_000L;

    private final CudaContext context;
    private final CudaStream stream;
    private final Kernel atomic;
    private final long ringDeviceAddress;
    /** The CQ's mirror in mapped host memory when the CQ itself is in GPU memory (bodies are copied over), or 0. */
    private final long mirrorDeviceAddress;
    private final int[] opcodeArg = new int[1];
    private final long[] targetArg = new long[1];
    private final long[] swapAddArg = new long[1];
    private final long[] compareArg = new long[1];
    private final long[] fetchArg = new long[1];
    private final long[] splitArg = new long[1];
    private final long[] lockArg = new long[1];
    private final long[] lockTimeoutArg = {LOCK_TIMEOUT_NANOS};
    private final KernelParameters atomicParams;
    private final AtomicChain chain;
    private final CudaEvent atomicDone;

    /**
     * @param chain      the NIC's order of split atomics, shared by every executor of the platform
     * @param atomicDone an event of {@code context} ({@link AtomicChain#eventOf}) that marks this executor's atomics
     */
    CudaQpExecutor(CudaContext context, Kernel atomic, long ringDeviceAddress, AtomicChain chain,
                   CudaEvent atomicDone) {
        this(context, atomic, ringDeviceAddress, 0, chain, atomicDone);
    }

    /**
     * @param ringDeviceAddress   where the CQ's ring memory is for the GPU (the rings, host or GPU memory)
     * @param mirrorDeviceAddress the engine's mirror of GPU-memory rings (mapped host memory, same offsets), or 0 for
     *                            rings in host memory, into which the engine writes CQE bodies itself
     */
    CudaQpExecutor(CudaContext context, Kernel atomic, long ringDeviceAddress, long mirrorDeviceAddress,
                   AtomicChain chain, CudaEvent atomicDone) {
        this.context = context;
        this.stream = context.createStream();
        this.atomic = atomic;
        this.ringDeviceAddress = ringDeviceAddress;
        this.mirrorDeviceAddress = mirrorDeviceAddress;
        this.chain = chain;
        this.atomicDone = atomicDone;
        this.atomicParams = KernelParameters.of(opcodeArg, targetArg, swapAddArg, compareArg, fetchArg, splitArg,
                lockArg, lockTimeoutArg);
    }

    @Override
    public void copy(long dst, long src, long bytes) {
        context.makeCurrent();
        check(Driver.copyAsync(DevicePointer.of(dst), DevicePointer.of(src), bytes, stream), "cuMemcpyAsync", dst);
    }

    @Override
    public void zero(long dst, long bytes) {
        context.makeCurrent();
        check(Driver.setAsync(DevicePointer.of(dst), (byte) 0, bytes, stream), "cuMemsetD8Async", dst);
    }

    /**
     * An 8-byte store: {@code cuStreamWriteValue64} (no kernel, fences before the store); where the driver refuses a
     * stream write to that address (a peer GPU's memory on some systems), the atomic kernel stores instead, from then
     * on for this QP.
     */
    @Override
    public void store64(long dst, long value) {
        context.makeCurrent();
        if (!kernelStores) {
            int result = Driver.writeValue64(stream, DevicePointer.of(dst), value);
            if (result == Driver.SUCCESS) {
                return;
            }
            if (result != Driver.INVALID_VALUE && result != Driver.NOT_SUPPORTED) {
                check(result, "cuStreamWriteValue64", dst);
            }
            kernelStores = true;
        }
        atomic(STORE, dst, value, 0, 0, 0, 0);
    }

    /** The helper kernel's opcode for a plain 8-byte store (not an mlx5 opcode). */
    static final int STORE = 0;
    private boolean kernelStores;

    /**
     * Split atomics ({@code splitNanos > 0}) run one at a time process-wide: each waits for the previous one
     * ({@link AtomicChain}), since the streams of different QPs run concurrently and a NIC's atomics are atomic with
     * each other; only other writers of the word (GPU atomics) can fall between a read and its write. Across
     * processes the chain is not enough (each process has its own engine): the kernel also holds the responder's lock
     * line ({@code lockAddress}, see {@link EmulatedNic#serializeAtomics}).
     */
    @Override
    public void atomic(int opcode, long target, long swapAdd, long compare, long fetchDst, long splitNanos,
                       long lockAddress) {
        opcodeArg[0] = opcode;
        targetArg[0] = target;
        swapAddArg[0] = swapAdd;
        compareArg[0] = compare;
        fetchArg[0] = fetchDst;
        splitArg[0] = splitNanos;
        lockArg[0] = lockAddress;
        context.makeCurrent();
        if (splitNanos == 0) {
            check(Driver.launchOneThread(atomic, stream, atomicParams), "cuLaunchKernel(" + ATOMIC_KERNEL + ")",
                    target);
            return;
        }
        synchronized (AtomicChain.ORDER) { // other NICs' engines chain their split atomics through the same order
            chain.waitForPrevious(stream, target);
            check(Driver.launchOneThread(atomic, stream, atomicParams), "cuLaunchKernel(" + ATOMIC_KERNEL + ")",
                    target);
            chain.markLast(atomicDone, stream, target);
        }
    }

    @Override
    public void publishCqe(long cqeTailOffset, long tailBigEndian) {
        // cuStreamWriteValue64 stores the value in host (little-endian) order; the CQE wants big-endian bytes. The CQ
        // is mapped host memory or this GPU's memory, which stream writes always reach.
        context.makeCurrent();
        long address = ringDeviceAddress + cqeTailOffset;
        if (mirrorDeviceAddress != 0) {
            // A CQ in GPU memory: the body the engine wrote into its mirror goes first, on the same stream.
            long body = cqeTailOffset - CqeDescriptor.TAIL_OFFSET;
            stream.copyAsync(DevicePointer.of(ringDeviceAddress + body), DevicePointer.of(mirrorDeviceAddress + body),
                    CqeDescriptor.TAIL_OFFSET);
        }
        check(Driver.writeValue64(stream, DevicePointer.of(address), Long.reverseBytes(tailBigEndian)),
                "cuStreamWriteValue64 (CQE)", address);
    }

    @Override
    public void drain() {
        if (!stream.isClosed() && !context.isClosed()) {
            stream.synchronize();
        }
    }

    @Override
    public void close() {
        if (!context.isClosed()) {
            stream.close();
        }
    }

    static void check(int result, String call, long address) {
        if (result != Driver.SUCCESS) {
            Cuda.check(result, call + " at 0x" + Long.toHexString(address) + " (emulated NIC)");
        }
    }
}

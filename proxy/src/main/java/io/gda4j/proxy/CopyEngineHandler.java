package io.gda4j.proxy;

import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_ATOMIC_ADD;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_FLUSH;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_NOP;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.MEMORY_HEAP;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_ADD;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaException;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.Driver;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.KernelParameters;
import io.gda4j.cuda.MutableDevicePointer;
import io.gda4j.cuda.StreamWriteBatch;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Executes a channel's triggers with the copy engine, in FIFO order, without waiting for any of them:
 * <ul>
 *   <li>PUT: {@code cuMemcpyDtoDAsync} (with peer access) or {@code cuMemcpyPeerAsync} (without) on the channel's
 *       stream, on the pushing rank's GPU;</li>
 *   <li>SIGNAL set: a write of the value into the peer's word on the signal stream; add and ATOMIC_ADD: a one-thread
 *       kernel doing a system-scope atomicAdd there. The signal stream is the channel's own stream (signal path
 *       DIRECT: the write queues right behind the copy, so it cannot pass the data and the host does not wait in
 *       between) or a stream on the peer's GPU that first waits for an event recorded behind the copies (PEER_STREAM:
 *       no peer access needed);</li>
 *   <li>PUT_SIGNAL: the PUT, then the SIGNAL;</li>
 *   <li>FLUSH at position p: a write of p + 1 into the channel's {@code done} word on the channel's stream, behind all
 *       the work before it (and behind the signal stream, joined by an event): the GPU's flush polls its own memory
 *       and the proxy thread goes straight on to other triggers and channels;</li>
 *   <li>NOP: nothing.</li>
 * </ul>
 * On the DIRECT path the writes of one poll that follow each other (SETs and FLUSH's done word) go to the driver in one
 * {@code cuStreamBatchMemOp} ({@link StreamWriteBatch}), submitted before anything else is queued and at the end of
 * the poll: an 8-byte {@code put_signal} (two SETs) costs one call instead of two.
 *
 * <p>Every field is checked against the heap again here: the host never trusts a trigger to stay in range. Driver
 * handles and reusable pointers are prepared once, so a trigger costs its driver calls and no allocation.
 */
final class CopyEngineHandler implements TriggerHandler {
    static final String MODULE = "proxy";
    static final String ATOMIC_ADD_KERNEL = "gda4j_proxy_atomic_add";
    /** Between cuStreamQuery polls while a channel closes. */
    private static final long COMPLETION_POLL_NANOS = 50_000;

    private final String channelName;
    private final long localHeap;
    private final long peerHeap;
    private final long heapSize;
    private final CudaContext localContext;
    private final CudaContext peerContext;
    private final CudaStream stream;
    private final boolean peerStreamSignals;
    private final CudaContext signalContext;
    private final CudaStream signalStream;
    private final CudaEvent copiesDone;
    private final CudaEvent signalsDone;
    private final Kernel atomicAdd;
    private final DevicePointer doneWord;
    private final BooleanSupplier signalStreamGone;
    private final MutableDevicePointer dst = new MutableDevicePointer();
    private final MutableDevicePointer src = new MutableDevicePointer();
    /** Writes (SETs, FLUSH's done word) held for the signal stream until something else is queued or the poll ends. */
    private final StreamWriteBatch writes;
    private final ByteBuffer atomicWordArg = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
    private final ByteBuffer atomicValueArg = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
    private final KernelParameters atomicArgs;
    /** The signal stream has work the channel's stream has not been ordered behind yet (PEER_STREAM only). */
    private boolean signalStreamAhead;
    /**
     * The context this handler made current since its batch began, or null. A batch (the triggers of one poll) runs
     * on one thread with no other handler in between, so making the same context current again can be skipped: a
     * PUT_SIGNAL made it current twice. {@link #progress()}, which ends every batch, forgets it.
     */
    private CudaContext madeCurrent;
    private long lastPosition = -1;

    /**
     * @param peerStreamSignals whether signals go through {@code signalStream} on the peer's GPU (then
     *                          {@code copiesDone} and {@code signalsDone} are events for the hand-offs)
     * @param atomicAdd         {@value #ATOMIC_ADD_KERNEL}, loaded in the signal stream's context
     * @param doneWord          the channel's {@code done} word in the pushing rank's GPU memory
     * @param signalStreamGone  whether the peer-side signal stream was already destroyed (its rank closed first)
     */
    CopyEngineHandler(String channelName, long localHeap, long peerHeap, long heapSize, CudaContext localContext,
                      CudaContext peerContext, CudaStream stream, boolean peerStreamSignals, CudaStream signalStream,
                      CudaEvent copiesDone, CudaEvent signalsDone, Kernel atomicAdd, DevicePointer doneWord,
                      BooleanSupplier signalStreamGone) {
        this.channelName = channelName;
        this.localHeap = localHeap;
        this.peerHeap = peerHeap;
        this.heapSize = heapSize;
        this.localContext = localContext;
        this.peerContext = peerContext;
        this.stream = stream;
        this.peerStreamSignals = peerStreamSignals;
        this.signalContext = peerStreamSignals ? peerContext : localContext;
        this.signalStream = peerStreamSignals ? signalStream : stream;
        this.copiesDone = copiesDone;
        this.signalsDone = signalsDone;
        this.atomicAdd = atomicAdd;
        this.doneWord = doneWord;
        this.signalStreamGone = signalStreamGone;
        this.atomicArgs = KernelParameters.of(atomicWordArg, atomicValueArg);
        this.writes = new StreamWriteBatch(this.signalStream);
    }

    @Override
    public void onTrigger(long position, long word0, long word1, long next0, long next1) {
        try {
            handle(position, word0, word1, next0, next1);
        } catch (RuntimeException e) {
            // The FIFO pops the triggers before this one: the writes they left held must still reach the stream.
            try {
                submitWrites();
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
    }

    private void handle(long position, long word0, long word1, long next0, long next1) {
        switch (TriggerFifoDescriptor.kind(word0)) {
            case KIND_NOP:
                return;
            case KIND_PUT:
                put(position, word0, word1);
                break;
            case KIND_PUT_SIGNAL:
                put(position, word0, word1);
                signal(position + 1, next0, next1, false);
                break;
            case KIND_SIGNAL:
                signal(position, word0, word1, false);
                break;
            case KIND_ATOMIC_ADD:
                signal(position, word0, word1, true);
                break;
            case KIND_FLUSH:
                flush(position);
                break;
            default:
                throw bad(position, word0, word1, next0, next1, "its kind is unknown");
        }
        lastPosition = position;
    }

    private void put(long position, long word0, long word1) {
        long size = TriggerFifoDescriptor.sizeBytes(word0, word1);
        long to = TriggerFifoDescriptor.dstOffset(word0);
        long from = TriggerFifoDescriptor.srcOffset(word1);
        if (TriggerFifoDescriptor.dstMemory(word1) != MEMORY_HEAP || TriggerFifoDescriptor.srcMemory(word1) != MEMORY_HEAP
                || to > heapSize || size > heapSize - to || from > heapSize || size > heapSize - from) {
            throw bad(position, word0, word1, 0, 0, "it addresses memory outside the symmetric heap of " + heapSize
                    + " bytes");
        }
        if (size == 0) {
            return;
        }
        submitWrites();
        dst.set(peerHeap + to);
        src.set(localHeap + from);
        current(localContext, position);
        int result = peerStreamSignals
                ? Driver.copyPeerAsync(dst, peerContext, src, localContext, size, stream)
                : Driver.copyDeviceToDeviceAsync(dst, src, size, stream);
        if (result != Driver.SUCCESS) {
            throw cuda(result, peerStreamSignals ? "cuMemcpyPeerAsync" : "cuMemcpyDtoDAsync", position, word0, word1);
        }
    }

    private void signal(long position, long word0, long word1, boolean atomic) {
        long offset = TriggerFifoDescriptor.wordOffset(word0);
        if (TriggerFifoDescriptor.signalMemory(word0) != MEMORY_HEAP || (offset & 7) != 0 || offset > heapSize - 8) {
            throw bad(position, word0, word1, 0, 0, "its signal word is misaligned or outside the symmetric heap of "
                    + heapSize + " bytes");
        }
        long value = TriggerFifoDescriptor.signalValue(word0, word1);
        boolean write = !atomic && TriggerFifoDescriptor.signalOp(word0) != SIGNAL_OP_ADD;
        if (write && !peerStreamSignals) {
            hold(peerHeap + offset, value, position); // behind the copy it follows, on the same stream
            return;
        }
        submitWrites();
        if (peerStreamSignals) {
            current(localContext, position);
            check(Driver.record(copiesDone, stream), "cuEventRecord", position, word0, word1);
            current(peerContext, position);
            check(Driver.waitEvent(signalStream, copiesDone), "cuStreamWaitEvent", position, word0, word1);
            signalStreamAhead = true;
        } else {
            current(localContext, position);
        }
        if (write) {
            writes.add(peerHeap + offset, value, position);
            submitWrites();
        } else {
            atomicWordArg.putLong(0, peerHeap + offset);
            atomicValueArg.putLong(0, value);
            check(Driver.launchOneThread(atomicAdd, signalStream, atomicArgs), "cuLaunchKernel(" + ATOMIC_ADD_KERNEL
                    + ")", position, word0, word1);
        }
    }

    private void flush(long position) {
        if (!peerStreamSignals) {
            hold(doneWord.address(), position + 1, position); // on the channel's stream, behind everything before it
            return;
        }
        submitWrites();
        if (signalStreamAhead) {
            current(peerContext, position);
            check(Driver.record(signalsDone, signalStream), "cuEventRecord", position, 0, 0);
            current(localContext, position);
            check(Driver.waitEvent(stream, signalsDone), "cuStreamWaitEvent", position, 0, 0);
            signalStreamAhead = false;
        } else {
            current(localContext, position);
        }
        check(Driver.writeValue64(stream, doneWord, position + 1), "cuStreamWriteValue64(done)", position, 0, 0);
    }

    private void current(CudaContext context, long position) {
        if (context == madeCurrent) {
            return;
        }
        int result = Driver.makeCurrent(context);
        if (result != Driver.SUCCESS) {
            madeCurrent = null;
            throw cuda(result, "cuCtxSetCurrent", position, 0, 0);
        }
        madeCurrent = context;
    }

    /** Holds a write for the channel's stream (DIRECT path), after those held already. */
    private void hold(long address, long value, long position) {
        writes.add(address, value, position);
        if (writes.isFull()) {
            submitWrites();
        }
    }

    /** Queues the writes held, in the signal stream's context; nothing when none is held. */
    private void submitWrites() {
        if (writes.isEmpty()) {
            return;
        }
        long position = writes.firstPosition();
        int n = writes.size();
        current(signalContext, position);
        int result = writes.submit();
        if (result != Driver.SUCCESS) {
            throw cuda(result, "cuStreamBatchMemOp (" + n + " writes from this one on)", position, 0, 0);
        }
    }

    @Override
    public int progress() {
        submitWrites(); // the poll's last writes: nothing else will push them out
        madeCurrent = null; // the next batch may run after other handlers, or on another thread
        return 0;
    }

    private void check(int result, String call, long position, long word0, long word1) {
        if (result != Driver.SUCCESS) {
            throw cuda(result, call, position, word0, word1);
        }
    }

    @Override
    public boolean awaitCompletion(long timeoutNanos) {
        madeCurrent = null; // complete() below switches contexts itself
        long deadline = System.nanoTime() + timeoutNanos;
        boolean first = true;
        while (true) {
            // The peer's rank may have closed first (a world closes its ranks one by one), taking the signal stream
            // it owned with it: whatever was queued there has been waited for by then.
            boolean done = complete(localContext, stream) && (!peerStreamSignals || signalStreamGone.getAsBoolean()
                    || complete(peerContext, signalStream));
            if (done) {
                return true;
            }
            if (!first && System.nanoTime() - deadline > 0) {
                return false;
            }
            first = false;
            LockSupport.parkNanos(COMPLETION_POLL_NANOS);
        }
    }

    private static boolean complete(CudaContext context, CudaStream s) {
        Driver.makeCurrent(context);
        int result = Driver.query(s);
        if (result == Driver.NOT_READY) {
            return false;
        }
        if (result != Driver.SUCCESS) {
            throw new CudaException(result, "cuStreamQuery on a proxy stream while it closed");
        }
        return true;
    }

    @Override
    public String inFlight() {
        return lastPosition < 0 ? "nothing handled yet" : "copies and signals up to trigger position " + lastPosition;
    }

    private ProxyException bad(long position, long word0, long word1, long next0, long next1, String why) {
        return new ProxyException(String.format(Locale.ROOT, "refused trigger %d (%s; words 0x%016x 0x%016x): %s",
                position, Trigger.decode(word0, word1, next0, next1), word0, word1, why));
    }

    private ProxyException cuda(int result, String call, long position, long word0, long word1) {
        String what = word0 == 0 && word1 == 0 ? "" : " (" + Trigger.decode(word0, word1, 0, 0) + ")";
        return new ProxyException(String.format(Locale.ROOT, "%s failed for trigger %d%s on %s: %s", call, position,
                what, channelName, CudaException.describe(result)));
    }
}

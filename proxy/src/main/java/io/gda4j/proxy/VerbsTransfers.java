package io.gda4j.proxy;

import io.gda4j.cuda.CudaStream;
import io.gda4j.transport.HostTransfers;

import java.util.List;
import java.util.function.Consumer;

/**
 * The host-queued transfers of a verbs link: each {@link #queue} becomes one {@link VerbsHandler.Batch} (its WRITEs,
 * split at {@link VerbsHandler#MAX_WRITE_BYTES}, then the signal), which a host function on the caller's stream hands
 * to the proxy thread once the work before it is done; the proxy thread posts it as one chained post with one
 * doorbell. The stream does not wait for the WRITEs: the caller's protocol learns they landed from the peer's side,
 * and must not rewrite their sources before (the MoE calls' order sees to it). Sources must lie in the local heap, the
 * memory the NIC registered.
 */
final class VerbsTransfers implements HostTransfers {
    private final String channelName;
    private final VerbsLink link;
    private final VerbsHandler handler;
    /** The local heap as the local GPU addresses it (where the caller's addresses point). */
    private final long localHeapBase;

    VerbsTransfers(String channelName, VerbsLink link, VerbsHandler handler, long localHeapBase) {
        this.channelName = channelName;
        this.link = link;
        this.handler = handler;
        this.localHeapBase = localHeapBase;
    }

    @Override
    public boolean readsAnyDeviceMemory() {
        return false;
    }

    @Override
    public void queue(CudaStream stream, List<Transfer> transfers, long counterAddress, long signalOffset,
                      Consumer<Runnable> hostWork) {
        VerbsHandler.Batch batch = batch(transfers, counterAddress, signalOffset);
        hostWork.accept(() -> handler.offerBatch(batch));
    }

    /** The batch of {@code transfers} and the signal, checked against both heaps; no CUDA. */
    VerbsHandler.Batch batch(List<Transfer> transfers, long counterAddress, long signalOffset) {
        long heap = link.heapBytes();
        int writes = 0;
        for (Transfer t : transfers) {
            checkRange(t.srcAddress() - localHeapBase, t.bytes(), "source");
            checkRange(t.dstOffset(), t.bytes(), "destination");
            writes += (int) ((t.bytes() + VerbsHandler.MAX_WRITE_BYTES - 1) / VerbsHandler.MAX_WRITE_BYTES);
        }
        checkRange(counterAddress - localHeapBase, 8, "signal counter");
        requireSignalWord(channelName, signalOffset, heap);
        long[] local = new long[writes];
        long[] remote = new long[writes];
        int[] bytes = new int[writes];
        int w = 0;
        for (Transfer t : transfers) {
            for (long done = 0; done < t.bytes(); done += VerbsHandler.MAX_WRITE_BYTES) {
                local[w] = link.localHeap() + (t.srcAddress() - localHeapBase) + done;
                remote[w] = link.peerHeap() + t.dstOffset() + done;
                bytes[w] = (int) Math.min(VerbsHandler.MAX_WRITE_BYTES, t.bytes() - done);
                w++;
            }
        }
        return new VerbsHandler.Batch(local, remote, bytes, link.localHeap() + (counterAddress - localHeapBase),
                link.peerHeap() + signalOffset, link.relaxedOrdering());
    }

    /** Refuses a signal word that is not an aligned 8-byte word of a heap of {@code heapBytes}. */
    static void requireSignalWord(String channelName, long signalOffset, long heapBytes) {
        if ((signalOffset & 7) != 0 || signalOffset < 0 || signalOffset > heapBytes - 8) {
            throw new IllegalArgumentException(channelName + ": the signal word at heap offset " + signalOffset
                    + " is misaligned or outside the heap of " + heapBytes + " bytes");
        }
    }

    private void checkRange(long offset, long bytes, String what) {
        long heap = link.heapBytes();
        if (offset < 0 || bytes > heap || offset > heap - bytes) {
            throw new IllegalArgumentException(channelName + ": a host-queued transfer's " + what + " (" + bytes
                    + " bytes at heap offset " + offset + ") lies outside the heap of " + heap + " bytes, which is"
                    + " all a verbs link's NIC reaches: copy the data into the heap first");
        }
    }
}

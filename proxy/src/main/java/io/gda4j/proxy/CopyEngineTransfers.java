package io.gda4j.proxy;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.transport.HostTransfers;

import java.util.List;
import java.util.function.Consumer;

/**
 * The host-queued transfers of a copy-engine link: copies on the caller's stream into the peer's heap as this process
 * maps it ({@code cuMemcpyAsync}; {@code cuMemcpyPeerAsync} where the GPUs have no peer access and the driver stages
 * the copy), then an 8-byte copy of the counter into the peer's signal word: copies on one stream run in order, so it
 * lands after the data. No proxy thread, no trigger; graphs capture them as memcpy nodes.
 */
final class CopyEngineTransfers implements HostTransfers {
    private final String channelName;
    private final CudaContext localContext;
    /** The peer's context, for peer copies; null where copies address the peer's heap directly. */
    private final CudaContext peerCopyContext;
    private final long peerHeap;
    private final long heapBytes;

    /**
     * @param peerCopyContext the peer's context where the GPUs lack peer access (copies then go through
     *                        {@code cuMemcpyPeerAsync}), else null
     * @param peerHeap        the peer's heap as the local GPU addresses it
     */
    CopyEngineTransfers(String channelName, CudaContext localContext, CudaContext peerCopyContext, long peerHeap,
                        long heapBytes) {
        this.channelName = channelName;
        this.localContext = localContext;
        this.peerCopyContext = peerCopyContext;
        this.peerHeap = peerHeap;
        this.heapBytes = heapBytes;
    }

    @Override
    public boolean readsAnyDeviceMemory() {
        return true;
    }

    @Override
    public void queue(CudaStream stream, List<Transfer> transfers, long counterAddress, long signalOffset,
                      Consumer<Runnable> hostWork) {
        for (Transfer t : transfers) {
            if (t.bytes() > heapBytes || t.dstOffset() > heapBytes - t.bytes()) {
                throw new IllegalArgumentException(channelName + ": a host-queued transfer of " + t.bytes()
                        + " bytes to heap offset " + t.dstOffset() + " lies outside the peer's heap of " + heapBytes
                        + " bytes");
            }
        }
        VerbsTransfers.requireSignalWord(channelName, signalOffset, heapBytes);
        for (Transfer t : transfers) {
            copy(stream, t.dstOffset(), t.srcAddress(), t.bytes());
        }
        copy(stream, signalOffset, counterAddress, 8);
    }

    private void copy(CudaStream stream, long dstOffset, long src, long bytes) {
        DevicePointer to = DevicePointer.of(peerHeap + dstOffset);
        if (peerCopyContext == null) {
            stream.copyAsync(to, DevicePointer.of(src), bytes);
        } else {
            stream.copyPeerAsync(to, peerCopyContext, DevicePointer.of(src), localContext, bytes);
        }
    }
}

package io.gda4j.transport;

import io.gda4j.cuda.CudaStream;

import java.util.List;
import java.util.function.Consumer;

/**
 * Transfers into one peer's heap that the host queues itself, for a protocol whose sizes the host knows before the
 * data is ready (a MoE call after its layout): the link offers them ({@link PeerLink#hostTransfers()}) where its
 * transport has {@link Capability#HOST_TRANSFERS}. No trigger, and so no round trip through a proxy's FIFO: a copy
 * engine's link queues the copies on the caller's stream, a NIC's link has a host function queued there hand them to
 * its proxy thread, which posts them as one chained post with one doorbell. Either way they start once the work
 * queued on the stream before them is done, they are captured into a CUDA graph with the stream (memcpy or host
 * nodes), and a replay moves the same bytes again.
 */
public interface HostTransfers {
    /**
     * One transfer: {@code bytes} from this rank's memory at {@code srcAddress} (an address of the local GPU: in the
     * local heap, unless {@link #readsAnyDeviceMemory()}) into the peer's heap at {@code dstOffset}.
     */
    record Transfer(long srcAddress, long dstOffset, long bytes) {
        public Transfer {
            if (bytes <= 0 || dstOffset < 0) {
                throw new IllegalArgumentException("a transfer needs a positive size and a heap offset, got " + bytes
                        + " bytes to offset " + dstOffset);
            }
        }
    }

    /**
     * Whether a transfer may read any memory of the local GPU (a copy engine), or only the local heap (a NIC, whose
     * registration covers the heap alone): a caller with data elsewhere copies it into its heap first.
     */
    boolean readsAnyDeviceMemory();

    /**
     * Queues {@code transfers} on {@code stream}, behind the work queued there before, then the signal: the peer's
     * 8-byte word at heap offset {@code signalOffset} takes the value of this rank's 8-byte word at
     * {@code counterAddress} (in the local heap unless {@link #readsAnyDeviceMemory()}) once every transfer has landed.
     * That word must count the signals to {@code signalOffset}: 1 the first time, one more each time, since a link
     * may deliver it as an add of one (a NIC whose writes may pass each other) rather than a copy of the value.
     * Work that must run on the host once the stream gets there (a NIC's post) is handed to {@code hostWork}; the
     * caller queues it on the stream (one host function for all its peers) and must not let it call CUDA.
     *
     * @throws IllegalArgumentException for a transfer outside the heaps, or a source this link cannot read
     */
    void queue(CudaStream stream, List<Transfer> transfers, long counterAddress, long signalOffset,
               Consumer<Runnable> hostWork);
}

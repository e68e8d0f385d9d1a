package io.gda4j.transport;

/**
 * A peer rank that lives in another process of this host, as a transport sees it from the local rank: its heap is
 * already mapped into the local GPU's context by CUDA IPC (the world owns that mapping and unmaps it after the links
 * are closed), and nothing else of it (its context, streams, abort word) is reachable from here.
 *
 * @param rank          the peer's rank
 * @param heapAddress   the peer's heap as the local GPU addresses it (the IPC mapping)
 * @param heapBytes     the peer's heap size
 * @param sameGpu       whether the peer's process drives the local rank's GPU
 * @param nativeAtomics whether the link between the two GPUs carries atomics (true on one GPU)
 * @param description   "rank 1 (pid 4242 on node7, GPU 0000:19:00.0)", for messages
 */
public record RemotePeer(int rank, long heapAddress, long heapBytes, boolean sameGpu, boolean nativeAtomics,
                         String description) {
}

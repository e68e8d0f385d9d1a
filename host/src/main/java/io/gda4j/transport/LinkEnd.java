package io.gda4j.transport;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaDevice;
import io.gda4j.cuda.Kernel;

/**
 * A rank this process drives, as a transport sees it at either end of a link: what a {@link TransportProvider} may
 * use to connect it (its GPU, heap, abort word and error record). The world's rank implements it, so the transport
 * SPI names no type of the world; a peer in another process is a {@link RemotePeer} instead.
 */
public interface LinkEnd {
    /** The rank's number in the world. */
    int rank();

    int worldSize();

    CudaDevice device();

    /** The rank's GPU context: a transport allocates its rings, channels and streams here. */
    CudaContext context();

    /** The rank's symmetric heap as its own GPU addresses it. */
    long heapBase();

    long heapSizeBytes();

    /** GPU address of the rank's abort word (pinned host memory mapped into every GPU). */
    long abortFlagAddress();

    /** GPU address of the rank's device error record. */
    long errorRecordAddress();

    /** Raises the rank's abort flag from the host, while kernels may run; its spinning kernels stop within 64 polls. */
    void raiseAbort();

    /** A kernel of one of the toolkit's modules ({@code io/gda4j/ptx/<module>.ptx}), loaded once per GPU. */
    Kernel kernel(String module, String function);
}

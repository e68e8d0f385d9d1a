package io.gda4j.proxy;

import io.gda4j.transport.PeerLink;
import io.gda4j.transport.RemotePeer;
import io.gda4j.transport.TransportProvider;
import io.gda4j.transport.TransportTag;
import io.gda4j.world.Rank;

import java.util.Optional;

/**
 * The {@code proxy} transport (PortChannel): the GPU pushes 16-byte triggers, host proxy threads move the data with
 * the copy engine. Works for any pair of ranks in this process (copies are staged by the driver where the GPUs
 * cannot reach each other), so {@code auto} picks it last, after p2p and ibgda; and between processes of one host,
 * into the peer heap that the world mapped by CUDA IPC.
 *
 * <p>Ownership: every link of a world shares one {@link ProxyService}, created by the first {@link #connect} and
 * closed with the last link (a world closes all its links, so closing the world stops the proxy threads). A
 * provider instance that outlives a world starts a fresh service for the next one.
 */
public final class ProxyTransport implements TransportProvider {
    public static final String NAME = "proxy";

    private ProxyService service;
    private int links;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public TransportTag tag() {
        return TransportTag.PROXY;
    }

    @Override
    public int autoPreference() {
        return 20;
    }

    @Override
    public Optional<String> unavailableReason(Rank local, Rank peer) {
        try {
            long heap = Math.max(local.heapSizeBytes(), peer.heapSizeBytes());
            if (heap > TriggerFifoDescriptor.FIELD_LIMIT) {
                return Optional.of("the symmetric heap of " + heap + " bytes is larger than a proxy trigger can address"
                        + " (2^" + TriggerFifoDescriptor.OFFSET_BITS + " bytes)");
            }
            ProxyConfig config = ProxyConfig.resolve();
            if (config.signalPath() == ProxyConfig.SignalPath.DIRECT && !peerAccess(local, peer)) {
                return Optional.of("signal path 'direct' needs peer access from GPU " + local.device().ordinal()
                        + " to GPU " + peer.device().ordinal() + ", which it lacks: set " + ProxyConfig.SIGNAL_PATH_ENV
                        + " to auto or peer-stream");
            }
            return Optional.empty();
        } catch (RuntimeException e) {
            return Optional.of("cannot check the pair: " + e.getMessage());
        }
    }

    private static boolean peerAccess(Rank local, Rank peer) {
        return local.device().ordinal() == peer.device().ordinal() || local.device().canAccessPeer(peer.device());
    }

    @Override
    public PeerLink connect(Rank local, Rank peer) {
        ProxyConfig config = ProxyConfig.resolve();
        boolean peerStream = config.signalPath() == ProxyConfig.SignalPath.PEER_STREAM
                || (config.signalPath() == ProxyConfig.SignalPath.AUTO && !peerAccess(local, peer));
        ProxyService s = acquire(config);
        try {
            return ProxyChannel.open(local, peer, s, config, peerStream, c -> release(s)).link();
        } catch (RuntimeException e) {
            release(s);
            throw e;
        }
    }

    /**
     * Across processes of one host the copy engine copies into the peer's heap as mapped by CUDA IPC, and signals
     * take the direct path from this process's stream: the peer-stream path would need the peer's context.
     */
    @Override
    public Optional<String> unavailableAcrossProcesses(Rank local, RemotePeer peer) {
        try {
            long heap = peer.heapBytes(); // the world checked that every heap has this size
            if (heap > TriggerFifoDescriptor.FIELD_LIMIT) {
                return Optional.of("the symmetric heap of " + heap + " bytes is larger than a proxy trigger can address"
                        + " (2^" + TriggerFifoDescriptor.OFFSET_BITS + " bytes)");
            }
            if (ProxyConfig.resolve().signalPath() == ProxyConfig.SignalPath.PEER_STREAM) {
                return Optional.of("signal path 'peer-stream' needs the peer's CUDA context, which lives in another"
                        + " process: set " + ProxyConfig.SIGNAL_PATH_ENV + " to auto or direct");
            }
            return Optional.empty();
        } catch (RuntimeException e) {
            return Optional.of("cannot check the pair: " + e.getMessage());
        }
    }

    @Override
    public PeerLink connectAcrossProcesses(Rank local, RemotePeer peer) {
        ProxyConfig config = ProxyConfig.resolve();
        ProxyService s = acquire(config);
        try {
            return ProxyChannel.openAcrossProcesses(local, peer, s, config, c -> release(s)).link();
        } catch (RuntimeException e) {
            release(s);
            throw e;
        }
    }

    /** The service of the current world (started by its first link), counting one link more. */
    private synchronized ProxyService acquire(ProxyConfig config) {
        if (service == null || service.isClosed()) {
            service = new ProxyService(config);
        }
        links++;
        return service;
    }

    /** One link fewer on {@code s}; the last one closes it. */
    private void release(ProxyService s) {
        boolean last;
        synchronized (this) {
            links--;
            last = links == 0 && s == service;
            if (last) {
                service = null;
            }
        }
        if (last) {
            s.close();
        }
    }
}

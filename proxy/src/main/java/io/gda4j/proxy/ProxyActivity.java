package io.gda4j.proxy;

import io.gda4j.transport.PeerLink;
import io.gda4j.world.Rank;

import java.util.Optional;

/**
 * What a proxy channel's thread has done for it so far: triggers executed, and the time spent executing them (for
 * the copy-engine handler, its driver calls: copies and stream writes queued, not their completion). Take one before
 * and one after a stretch of work and subtract ({@link #since}): a handler time near the stretch's wall time says the
 * proxy thread, not the GPU or the link, limits it.
 */
public record ProxyActivity(long triggers, long handlerNanos) {
    public static final ProxyActivity NONE = new ProxyActivity(0, 0);

    /**
     * What the proxy thread has done so far for {@code local}'s channel to {@code peer} (triggers, time handling
     * them), or empty where that pair is not a proxy link of this process.
     */
    public static Optional<ProxyActivity> of(Rank local, int peer) {
        try {
            PeerLink link = local.link(peer);
            return link != null && link.resources() instanceof ProxyChannel pc ? Optional.of(pc.channel().activity())
                    : Optional.empty();
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** This snapshot less an earlier one of the same channel. */
    public ProxyActivity since(ProxyActivity before) {
        return new ProxyActivity(triggers - before.triggers, handlerNanos - before.handlerNanos);
    }

    /** The sum of two channels' activity. */
    public ProxyActivity plus(ProxyActivity other) {
        return new ProxyActivity(triggers + other.triggers, handlerNanos + other.handlerNanos);
    }
}

package io.gda4j.proxy;

import io.gda4j.world.DeviceErrorDecoder;
import io.gda4j.world.ErrorRecord;
import io.gda4j.world.WorldConfig;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * Words the proxy's device error records ({@code gda4j/transport/proxy/fifo.cuh}): a FIFO that stayed full, a flush
 * the proxy did not complete, a stopped proxy and a field that does not fit a trigger. Registered in
 * {@code META-INF/services/io.gda4j.world.DeviceErrorDecoder}.
 */
public final class ProxyErrorDecoder implements DeviceErrorDecoder {
    /** No room in a proxy FIFO before the timeout: the host proxy is not popping that channel. */
    public static final int PROXY_FIFO_FULL = 6;
    /** A flush (or quiet) was not completed by the host proxy before the timeout. */
    public static final int PROXY_FLUSH_TIMEOUT = 7;
    /** The host proxy serving the channel is stopped or has failed. */
    public static final int PROXY_STOPPED = 8;
    /** A field does not fit a proxy trigger (offsets and sizes below 2^38). */
    public static final int TRIGGER_FIELD = 9;

    private static final Map<Integer, String> CODES = Map.of(PROXY_FIFO_FULL, "PROXY_FIFO_FULL", PROXY_FLUSH_TIMEOUT,
            "PROXY_FLUSH_TIMEOUT", PROXY_STOPPED, "PROXY_STOPPED", TRIGGER_FIELD, "TRIGGER_FIELD");

    @Override
    public Map<Integer, String> codes() {
        return CODES;
    }

    @Override
    public boolean isTimeout(int code) {
        return code == PROXY_FIFO_FULL || code == PROXY_FLUSH_TIMEOUT;
    }

    @Override
    public String describe(ErrorRecord r, String where, Duration waitTimeout) {
        switch (r.code()) {
            case PROXY_FIFO_FULL:
                return String.format(Locale.ROOT,
                        "%s timed out after %.3f s waiting for room in the proxy FIFO: trigger position %d needs the "
                                + "proxy to have popped %d triggers, it had popped %d. The host proxy thread is not "
                                + "draining this channel (stopped, dead or blocked: see the transport problems), or "
                                + "the wait timeout (%s or -D%s, now %d ms) is shorter than the queued work.",
                        where, r.elapsedNanos() / 1e9, r.offset(), r.expected(), r.seen(),
                        WorldConfig.WAIT_TIMEOUT_ENV, WorldConfig.WAIT_TIMEOUT_PROP_NAME, waitTimeout.toMillis());
            case PROXY_FLUSH_TIMEOUT:
                return String.format(Locale.ROOT,
                        "%s timed out after %.3f s waiting for the host proxy to complete up to trigger position %d: "
                                + "it had completed %d triggers. The proxy thread is not executing this channel "
                                + "(stopped, dead or blocked: see the transport problems), or the copies queued before "
                                + "take longer than the wait timeout (%s or -D%s, now %d ms).",
                        where, r.elapsedNanos() / 1e9, r.offset(), r.seen(), WorldConfig.WAIT_TIMEOUT_ENV,
                        WorldConfig.WAIT_TIMEOUT_PROP_NAME, waitTimeout.toMillis());
            case PROXY_STOPPED:
                return String.format(Locale.ROOT,
                        "%s: the host proxy serving this channel is %s (state %d), so nothing pushed to it runs any "
                                + "more (trigger position %d). Close the world and build a new one; the transport "
                                + "problems say why it stopped.",
                        where, r.seen() == 2 ? "dead" : "stopped", r.seen(), r.offset());
            case TRIGGER_FIELD:
                return String.format(Locale.ROOT,
                        "%s at heap offset 0x%x: the value 0x%x does not fit a proxy trigger (offsets and sizes must be "
                                + "below 0x%x, signal words 8-byte aligned): keep the heap under 256 GiB.",
                        where, r.offset(), r.seen(), r.expected());
            default:
                throw new IllegalArgumentException("not a proxy error code: " + r.code());
        }
    }
}

package io.gda4j.proxy;

import java.util.Arrays;

/**
 * One proxy thread's work: poll each of its channels, handing published triggers to their handlers. The channel set
 * is an array replaced as a whole (copy on write) by the service, so {@link #doWork()} reads one volatile field and
 * allocates nothing.
 */
final class ProxyAgent implements Agent {
    private static final Channel[] NONE = new Channel[0];

    private final String roleName;
    private volatile Channel[] channels = NONE;

    ProxyAgent(String roleName) {
        this.roleName = roleName;
    }

    @Override
    public int doWork() {
        final Channel[] cs = channels;
        int work = 0;
        for (int i = 0; i < cs.length; i++) {
            work += cs[i].poll();
        }
        return work;
    }

    @Override
    public String roleName() {
        return roleName;
    }

    /** Callers hold the service's lock. */
    void add(Channel c) {
        Channel[] cs = Arrays.copyOf(channels, channels.length + 1);
        cs[cs.length - 1] = c;
        channels = cs;
    }

    /** Callers hold the service's lock. Returns whether it was there. */
    boolean remove(Channel c) {
        Channel[] cs = channels;
        for (int i = 0; i < cs.length; i++) {
            if (cs[i] == c) {
                Channel[] next = new Channel[cs.length - 1];
                System.arraycopy(cs, 0, next, 0, i);
                System.arraycopy(cs, i + 1, next, i, cs.length - i - 1);
                channels = next;
                return true;
            }
        }
        return false;
    }

    Channel[] channels() {
        return channels;
    }
}

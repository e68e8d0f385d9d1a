package io.gda4j.nic;

/**
 * Two QPs connected to each other: {@link #first()} was made from the first spec of
 * {@link Nic#createConnectedPair}, {@link #second()} from the second. Closing the pair closes both.
 */
public record QpPair(NicQp first, NicQp second) implements AutoCloseable {
    @Override
    public void close() {
        try {
            second.close();
        } finally {
            first.close();
        }
    }
}

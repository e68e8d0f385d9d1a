package io.gda4j.nic;

/**
 * Two QPs connected to each other: {@link #first()} was made from the first spec of
 * {@link Nic#createConnectedPair} (or {@link #connect}), {@link #second()} from the second. Closing the pair closes
 * both.
 */
public record QpPair(NicQp first, NicQp second) implements AutoCloseable {
    /**
     * Creates a QP on each NIC and connects them to each other, both in {@link QpState#RTS} on return: the pair of
     * two ranks whose GPUs use different NICs. On failure nothing is left open.
     */
    public static QpPair connect(Nic firstNic, QpSpec first, Nic secondNic, QpSpec second) {
        NicQp a = firstNic.createQp(first);
        try {
            NicQp b = secondNic.createQp(second);
            try {
                a.connect(b.address());
                b.connect(a.address());
                return new QpPair(a, b);
            } catch (RuntimeException e) {
                b.close();
                throw e;
            }
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
    }

    @Override
    public void close() {
        try {
            second.close();
        } finally {
            first.close();
        }
    }
}

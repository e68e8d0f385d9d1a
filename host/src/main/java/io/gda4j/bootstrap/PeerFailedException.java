package io.gda4j.bootstrap;

/** A rank of the world died or went silent; every pending and later bootstrap call throws this, naming it. */
public final class PeerFailedException extends BootstrapException {
    private static final long serialVersionUID = 1L;
    private final int deadRank;

    public PeerFailedException(int deadRank, String message) {
        super(message);
        this.deadRank = deadRank;
    }

    /** The rank that failed first. */
    public int deadRank() {
        return deadRank;
    }
}

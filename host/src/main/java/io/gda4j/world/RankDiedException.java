package io.gda4j.world;

/**
 * A rank of a multi-process world died or stopped answering the bootstrap. Its peers' kernels were stopped through
 * their abort flags; the world cannot run again (close it and start a new job).
 */
public final class RankDiedException extends DeviceErrorException {
    private static final long serialVersionUID = 1L;
    private final int deadRank;

    public RankDiedException(int deadRank, String message, ErrorRecord record) {
        super(message, record);
        this.deadRank = deadRank;
    }

    /** The rank that was found dead first. */
    public int deadRank() {
        return deadRank;
    }
}

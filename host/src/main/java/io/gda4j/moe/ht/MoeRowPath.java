package io.gda4j.moe.ht;

/**
 * What moves a high-throughput call's rows between the ranks of a direct world (every pair p2p or self):
 * io.gda4j.moe.MoeConfig.Builder#rowPath. Both give the same outputs, bit for bit.
 */
public enum MoeRowPath {
    /** The buffer chooses per world: today the SMs ({@link #SM}), the path measured on GPUs of one host. */
    AUTO,
    /**
     * The SMs store each row straight into its place at the peer (a warp loads a token's row once and stores it to
     * every rank that gets it), and a combine pulls or pushes the rows back the same way.
     */
    SM,
    /**
     * The copy engines: a kernel on the buffer's blocks packs each destination's rows contiguously (this rank's own go
     * straight into its received tensors), the host queues one copy per received array and peer behind it on the
     * call's stream, the last carrying the call's sequence into the peer's done word, and a one-block kernel waits for
     * every peer's; the combine copies each source's rows back in one copy and sums them on the buffer's blocks. The
     * sizes come from the layout, so the host waits for the layout's exchange (not for any call) before a dispatch's
     * first copy. Graphs capture the copies as memcpy nodes. Needs a direct world.
     */
    COPY_ENGINE;

    /** The path a world gets: AUTO resolves to the SMs, and only a direct world can have the copy engines. */
    public MoeRowPath resolve(boolean direct) {
        if (!direct) {
            return SM;
        }
        return this == AUTO ? SM : this;
    }
}

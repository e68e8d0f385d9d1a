package io.gda4j.nic;

/**
 * What {@link Nics#select} decided: which provider, and a sentence saying why, for {@code gda4j info} and result
 * tables (e.g. "auto picked the emulated NIC: RDMA verbs: ... no RDMA device was found").
 *
 * @param provider the provider to open, or null when none can be
 * @param reason   why this one (or why none)
 */
public record NicSelection(NicProvider provider, String reason) {
    /** True when a provider was found. */
    public boolean found() {
        return provider != null;
    }
}

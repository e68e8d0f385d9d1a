package io.gda4j.nic;

import java.util.Optional;

/**
 * What the resources of a link that posts on a NIC implement ({@code PeerLink.resources()}): its NIC, so that code
 * above the transports labels figures by it (an emulated NIC's always say so) without asking which transport the link
 * is.
 */
public interface NicUser {
    /** The NIC the link posts on, or empty when this link uses none (a proxy link on the copy engine). */
    Optional<Nic> nic();
}

package io.gda4j.world;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How one process of a multi-process world reaches each peer, decided from the published {@link PeerCard}s alone,
 * before any CUDA call is made on a peer's behalf (which transport serves a pair: {@link TransportChoice}): a pure
 * function, so every refusal is tested on a machine with no GPU. A world that cannot connect every pair is refused at
 * creation, with all the reasons at once.
 */
final class ProcessRoutes {
    /** How the local rank reaches one peer. */
    enum Route {
        /** The rank itself. */
        SELF,
        /** Another process on the same GPU: its heap mapped by CUDA IPC, the GPU's own atomics. */
        IPC_SAME_GPU,
        /** Another process on another GPU of this host: its heap mapped by CUDA IPC over NVLink or PCIe. */
        IPC_PEER_GPU,
        /**
         * A process on another host: nothing of it is mapped; a transport that reaches it through a NIC (ibgda, the
         * proxy's verbs handler) connects the pair, or the world is refused naming what each transport lacks.
         */
        OTHER_HOST
    }

    private ProcessRoutes() {
    }

    /**
     * The route from {@code local} to every rank.
     *
     * @param cards every rank's card, indexed by rank
     * @param local this process's rank
     * @throws WorldSetupException listing every pair that cannot be connected, and what to do
     */
    static Route[] plan(List<PeerCard> cards, int local) {
        int n = cards.size();
        PeerCard me = cards.get(local);
        List<String> problems = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            PeerCard c = cards.get(r);
            if (c.rank() != r || c.worldSize() != n) {
                problems.add(String.format(Locale.ROOT, "the card at position %d says rank %d of %d, in a world of %d",
                        r, c.rank(), c.worldSize(), n));
            } else if (c.heapBytes() != me.heapBytes()) {
                problems.add(String.format(Locale.ROOT, "%s has a heap of %d bytes but rank %d has %d: the heap is "
                        + "symmetric, set the same %s in every process", c.describe(), c.heapBytes(), local,
                        me.heapBytes(), WorldConfig.HEAP_SIZE_ENV));
            }
        }
        if (!problems.isEmpty()) {
            throw new WorldSetupException("the processes of this job do not describe one world: "
                    + String.join("; ", problems));
        }
        Route[] routes = new Route[n];
        for (int r = 0; r < n; r++) {
            PeerCard peer = cards.get(r);
            if (r == local) {
                routes[r] = Route.SELF;
            } else if (!me.sameHost(peer)) {
                routes[r] = Route.OTHER_HOST;
            } else if (peer.heapHandle() == null) {
                problems.add(peer.describe() + " exported no heap handle");
            } else {
                routes[r] = me.sameGpu(peer) ? Route.IPC_SAME_GPU : Route.IPC_PEER_GPU;
            }
        }
        if (!problems.isEmpty()) {
            throw new WorldSetupException("rank " + local + " cannot reach every peer: " + String.join("; ", problems));
        }
        return routes;
    }

    /**
     * The peer whose transport from {@code local} stands for that of the pair ({@code from}, {@code to}) of two
     * other ranks: the transport choice depends on the configuration, the same in every process, and on whether the
     * two share a host, so a peer of {@code local} in the same relation (of this host when the pair shares one, of
     * another host when not) answers for them; {@code from} itself where {@code local} has no such peer.
     */
    static int standIn(List<PeerCard> cards, int local, int from, int to) {
        boolean pairShares = cards.get(from).sameHost(cards.get(to));
        for (int p = 0; p < cards.size(); p++) {
            if (p != local && cards.get(local).sameHost(cards.get(p)) == pairShares) {
                return p;
            }
        }
        return from;
    }
}

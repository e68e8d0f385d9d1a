package io.gda4j.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/** The one transport choice of both worlds: auto and named choices, and every refusal's wording. */
class TransportChoiceTest {
    static final List<TransportProvider> PROVIDERS = List.of(provider("p2p", 0, null),
            provider("ibgda", 10, "transport ibgda does not connect processes yet"), provider("proxy", 20, null));
    static final String ACROSS = ", or drive every GPU from one JVM (LocalWorld), where every transport works";

    /** What the providers of {@link #PROVIDERS} say of a pair: the reason each was made with. */
    static Optional<String> why(TransportProvider p) {
        return p.toString().isEmpty() ? Optional.empty() : Optional.of(p.toString());
    }

    static TransportProvider choose(String wanted, List<TransportProvider> providers, String pair) {
        return TransportChoice.choose(wanted, providers, pair, TransportChoiceTest::why, "between these processes",
                ACROSS);
    }

    @Test
    void autoTakesTheFirstTransportThatConnectsAndANamedOneIsTakenAsNamed() {
        assertEquals("p2p", choose("auto", PROVIDERS, "pair").name());
        assertEquals("proxy", choose("auto", PROVIDERS.subList(1, 3), "pair").name(),
                "ibgda cannot, so auto goes on to the proxy");
        assertEquals("proxy", choose("PROXY", PROVIDERS, "pair").name());
    }

    @Test
    void aTransportThatCannotConnectIsRefusedNamingThoseThatCan() {
        TransportSetupException e = assertThrows(TransportSetupException.class,
                () -> choose("ibgda", PROVIDERS, "rank 0 to rank 1 (pid 7)"));
        assertEquals("no transport connects rank 0 to rank 1 (pid 7): ibgda: transport ibgda does not connect"
                + " processes yet. Between these processes p2p, proxy can: set " + Transports.TRANSPORT_ENV
                + "=auto or one of them" + ACROSS, e.getMessage());
        TransportSetupException unknown = assertThrows(TransportSetupException.class,
                () -> choose("carrier-pigeon", PROVIDERS, "pair"));
        assertEquals("unknown transport 'carrier-pigeon': available here are auto, p2p, ibgda, proxy",
                unknown.getMessage());
    }

    /** One JVM: the same rule, its own words (LocalWorld passes no suffix). */
    @Test
    void whenNothingConnectsEveryReasonIsGiven() {
        List<TransportProvider> none = List.of(provider("p2p", 0, "no peer access between GPU 0 and GPU 1"),
                provider("proxy", 20, "the proxy is not on the class path"));
        TransportSetupException e = assertThrows(TransportSetupException.class, () -> TransportChoice.choose("auto",
                none, "rank 0 to rank 1", TransportChoiceTest::why, "between these ranks", ""));
        assertEquals("no transport connects rank 0 to rank 1: p2p: no peer access between GPU 0 and GPU 1; proxy: the"
                + " proxy is not on the class path", e.getMessage());
        TransportSetupException empty = assertThrows(TransportSetupException.class, () -> TransportChoice.choose("auto",
                List.of(), "rank 0 to rank 1", TransportChoiceTest::why, "between these ranks", ""));
        assertEquals("no transport connects rank 0 to rank 1: no transport is on the class path", empty.getMessage());
        TransportSetupException named = assertThrows(TransportSetupException.class, () -> TransportChoice.choose("p2p",
                List.of(none.get(0), provider("proxy", 20, null)), "rank 0 to rank 1", TransportChoiceTest::why,
                "between these ranks", ""));
        assertEquals("no transport connects rank 0 to rank 1: p2p: no peer access between GPU 0 and GPU 1. Between"
                + " these ranks proxy can: set " + Transports.TRANSPORT_ENV + "=auto or one of them",
                named.getMessage());
    }

    /** A provider that connects a pair or not, as told; only its name and that answer matter here. */
    static TransportProvider provider(String name, int preference, String whyNot) {
        return new TransportProvider() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Transport transport() {
                return Transport.P2P;
            }

            @Override
            public int autoPreference() {
                return preference;
            }

            @Override
            public Optional<String> unavailableReason(LinkEnd local, LinkEnd peer) {
                return Optional.empty();
            }

            @Override
            public PeerLink connect(LinkEnd local, LinkEnd peer) {
                throw new AssertionError("not connected in this test");
            }

            @Override
            public String toString() {
                return whyNot == null ? "" : whyNot;
            }
        };
    }
}

package io.gda4j.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.ibgda.IbgdaTransport;
import io.gda4j.p2p.P2pTransport;
import io.gda4j.transport.TransportTag.Trait;
import io.gda4j.world.DeviceViewDescriptor;

import java.util.EnumSet;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The tag registry and the traits of the tags this module defines. Only existing tags are defined again here: the
 * registry is one per JVM, and the module's tests share a JVM, so a made-up tag would outlive this class (and
 * DeviceViewLayoutTest would rightly find it unchecked against view.cuh).
 */
class TransportTagTest {

    @Test
    void theWorldsTwoTagsAndTheProvidersTagsHaveTheirCodesAndTraits() {
        assertTag(TransportTag.NONE, "none", 0, 0, EnumSet.noneOf(Trait.class));
        assertTag(TransportTag.SELF, "self", 1, 0, EnumSet.of(Trait.DIRECT));
        assertTag(P2pTransport.TAG, "p2p", 2, 0, EnumSet.of(Trait.DIRECT, Trait.GPU_ATOMICS));
        assertTag(IbgdaTransport.TAG, "ibgda", 3, DeviceViewDescriptor.FLAG_IBGDA,
                EnumSet.of(Trait.PUTS_EACH_MESSAGE_FROM_ONE_BLOCK));
        assertTag(ProxyTagTwin.TAG, "proxy", 4, DeviceViewDescriptor.VIEW_FLAG_PROXY_PEERS,
                EnumSet.of(Trait.GPU_ATOMICS));
        assertEquals("the proxy", ProxyTagTwin.TAG.phrase());
        assertEquals("p2p", P2pTransport.TAG.phrase());
    }

    @Test
    void eachProviderReturnsItsOwnConstantNamedAsUsersTypeIt() {
        P2pTransport p2p = new P2pTransport();
        IbgdaTransport ibgda = new IbgdaTransport();
        assertSame(P2pTransport.TAG, p2p.tag());
        assertSame(IbgdaTransport.TAG, ibgda.tag());
        assertEquals(p2p.name(), p2p.tag().name());
        assertEquals(ibgda.name(), ibgda.tag().name());
    }

    @Test
    void toStringPrintsWhatTheEnumPrinted() {
        // Tables print tags ("transport P2P"): the upper-case name, as the enum's constants were spelled.
        assertEquals("NONE", TransportTag.NONE.toString());
        assertEquals("SELF", TransportTag.SELF.toString());
        assertEquals("P2P", P2pTransport.TAG.toString());
        assertEquals("IBGDA", IbgdaTransport.TAG.toString());
        assertEquals("PROXY", ProxyTagTwin.TAG.toString());
        assertEquals("transport P2P", "transport " + P2pTransport.TAG);
    }

    @Test
    void anIdenticalDefinitionReturnsTheRegisteredTag() {
        assertSame(P2pTransport.TAG, TransportTag.define("p2p", 2, "p2p", 0, Trait.GPU_ATOMICS, Trait.DIRECT),
                "the order of the traits does not matter");
        assertSame(TransportTag.SELF, TransportTag.define("self", 1, "self", 0, Trait.DIRECT, Trait.DIRECT));
        assertSame(ProxyTagTwin.TAG, TransportTag.define("proxy", 4, "the proxy",
                DeviceViewDescriptor.VIEW_FLAG_PROXY_PEERS, Trait.GPU_ATOMICS));
    }

    @Test
    void aConflictingDefinitionIsRefusedNamingBoth() {
        String traits = assertThrows(IllegalStateException.class,
                () -> TransportTag.define("p2p", 2, "p2p", 0, Trait.DIRECT)).getMessage();
        assertTrue(traits.contains("p2p (code 2, phrase 'p2p', view flags 0x0, traits [DIRECT])")
                && traits.contains("registered p2p (code 2, phrase 'p2p', view flags 0x0, traits [DIRECT, GPU_ATOMICS])")
                && traits.contains("TRANSPORT_*"), traits);

        String code = assertThrows(IllegalStateException.class,
                () -> TransportTag.define("nvlink", 2, "nvlink", 0, Trait.DIRECT, Trait.GPU_ATOMICS)).getMessage();
        assertTrue(code.contains("nvlink (code 2") && code.contains("registered p2p (code 2"), code);

        String name = assertThrows(IllegalStateException.class,
                () -> TransportTag.define("ibgda", 97, "ibgda", DeviceViewDescriptor.FLAG_IBGDA,
                        Trait.PUTS_EACH_MESSAGE_FROM_ONE_BLOCK)).getMessage();
        assertTrue(name.contains("ibgda (code 97") && name.contains("registered ibgda (code 3"), name);
        assertThrows(IllegalArgumentException.class, () -> TransportTag.ofCode(97), "a refused tag is not registered");

        String flags = assertThrows(IllegalStateException.class,
                () -> TransportTag.define("proxy", 4, "the proxy", 0, Trait.GPU_ATOMICS)).getMessage();
        assertTrue(flags.contains("view flags 0x0") && flags.contains("view flags 0x1"), flags);
        assertThrows(IllegalStateException.class,
                () -> TransportTag.define("proxy", 4, "proxy", DeviceViewDescriptor.VIEW_FLAG_PROXY_PEERS,
                        Trait.GPU_ATOMICS));
    }

    @Test
    void malformedDefinitionsAreRefused() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TransportTag.define("P2P", 2, "p2p", 0))
                .getMessage().contains("one lower-case word"));
        assertThrows(IllegalArgumentException.class, () -> TransportTag.define("", 98, "x", 0));
        assertThrows(IllegalArgumentException.class, () -> TransportTag.define(null, 98, "x", 0));
        assertThrows(IllegalArgumentException.class, () -> TransportTag.define("two words", 98, "x", 0));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TransportTag.define("neg", -1, "neg", 0))
                .getMessage().contains("negative"));
        assertThrows(IllegalArgumentException.class, () -> TransportTag.define("blank", 98, " ", 0));
        assertThrows(IllegalArgumentException.class, () -> TransportTag.ofCode(98), "nothing was registered");
    }

    @Test
    void ofCodeFindsEachTagAndExplainsAnUnknownCode() {
        assertSame(TransportTag.NONE, TransportTag.ofCode(0));
        assertSame(TransportTag.SELF, TransportTag.ofCode(1));
        assertSame(P2pTransport.TAG, TransportTag.ofCode(2));
        assertSame(IbgdaTransport.TAG, TransportTag.ofCode(3));
        assertSame(ProxyTagTwin.TAG, TransportTag.ofCode(4));
        String m = assertThrows(IllegalArgumentException.class, () -> TransportTag.ofCode(99)).getMessage();
        assertTrue(m.contains("unknown transport code 99") && m.contains("none (0), self (1), p2p (2), ibgda (3)")
                && m.contains("not on the class path")
                && m.contains("META-INF/services/io.gda4j.transport.TransportProvider"), m);
    }

    @Test
    void knownListsTheClassPathsTagsInCodeOrder() {
        List<TransportTag> known = TransportTag.known();
        assertTrue(known.containsAll(List.of(TransportTag.NONE, TransportTag.SELF, P2pTransport.TAG,
                IbgdaTransport.TAG)), known.toString());
        for (int i = 1; i < known.size(); i++) {
            assertTrue(known.get(i - 1).code() < known.get(i).code(), known.toString());
        }
    }

    @Test
    void tagsAreValues() {
        assertEquals(P2pTransport.TAG, TransportTag.ofCode(2));
        assertEquals(P2pTransport.TAG.hashCode(), TransportTag.ofCode(2).hashCode());
        assertNotEquals(P2pTransport.TAG, IbgdaTransport.TAG);
        assertNotEquals(P2pTransport.TAG, "P2P");
        assertThrows(UnsupportedOperationException.class, () -> P2pTransport.TAG.traits().add(Trait.DIRECT));
    }

    private static void assertTag(TransportTag t, String name, int code, int viewFlags, EnumSet<Trait> traits) {
        assertEquals(name, t.name());
        assertEquals(code, t.code());
        assertEquals(viewFlags, t.viewFlags(), name + "'s view flags");
        assertEquals(traits, t.traits(), name + "'s traits");
        for (Trait trait : Trait.values()) {
            assertEquals(traits.contains(trait), t.has(trait), name + " " + trait);
        }
        assertFalse(t.phrase().isBlank());
    }
}

package io.gda4j.p2p;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Which P2P peer entries carry {@link P2pTransport#NO_NATIVE_ATOMICS} (the device then refuses ADDs to them). */
class P2pTransportTest {
    @Test
    void onlyTwoGpusWithoutNativeAtomicsAreMarked() {
        assertEquals(P2pTransport.NO_NATIVE_ATOMICS, P2pTransport.handleFlags(false, false),
                "PCIe without native atomics: red.add.sys there is a read and a write");
        assertEquals(0, P2pTransport.handleFlags(false, true), "NVLink (or PCIe with native atomics)");
        assertEquals(0, P2pTransport.handleFlags(true, false), "one GPU: its own atomics");
    }
}

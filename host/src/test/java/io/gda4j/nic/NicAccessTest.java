package io.gda4j.nic;

import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The 16-bit offer form of access rights, which ibgda's and the proxy verbs handler's offers carry. */
class NicAccessTest {
    @Test
    void everySetOfRightsSurvivesTheOfferForm() {
        for (int mask = 0; mask < 1 << NicAccess.values().length; mask++) {
            Set<NicAccess> access = EnumSet.noneOf(NicAccess.class);
            for (NicAccess a : NicAccess.values()) {
                if ((mask & 1 << a.ordinal()) != 0) {
                    access.add(a);
                }
            }
            int bits = NicAccess.offerBits(access);
            assertEquals(0, bits & ~0xffff, "fits 16 bits: " + access);
            assertEquals(0, NicAccess.unknownOfferBits(bits));
            assertEquals(access, NicAccess.ofOfferBits(bits), access.toString());
        }
        assertEquals(NicAccess.flags(NicAccess.HEAP) | 1 << 15,
                NicAccess.offerBits(EnumSet.of(NicAccess.RELAXED_ORDERING, NicAccess.LOCAL_WRITE,
                        NicAccess.REMOTE_WRITE, NicAccess.REMOTE_READ, NicAccess.REMOTE_ATOMIC)));
    }

    @Test
    void aBitThatNamesNoRightIsRefused() {
        assertEquals(1 << 4, NicAccess.unknownOfferBits(1 << 4));
        assertEquals(1 << 14, NicAccess.unknownOfferBits(NicAccess.flags(NicAccess.HEAP) | 1 << 14));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NicAccess.ofOfferBits(NicAccess.flags(NicAccess.HEAP) | 1 << 14));
        assertEquals("unknown access bits 0x4000", e.getMessage());
    }
}

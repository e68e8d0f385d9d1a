package io.gda4j.nic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

/** The auto|mlx5|emulated choice over fake providers. */
class NicsTest {
    record Fake(String name, int autoPreference, String unavailable) implements NicProvider {
        @Override
        public Optional<String> unavailableReason() {
            return Optional.ofNullable(unavailable);
        }

        @Override
        public Nic open(NicOptions options) {
            throw new UnsupportedOperationException();
        }
    }

    static final Fake MLX5_ABSENT = new Fake(Nic.MLX5, 0, "RDMA verbs: no RDMA device was found");
    static final Fake MLX5_PRESENT = new Fake(Nic.MLX5, 0, null);
    static final Fake EMULATED = new Fake(Nic.EMULATED, 100, null);

    @Test
    void autoPrefersARealNic() {
        NicSelection s = Nics.select(NicChoice.AUTO, List.of(MLX5_PRESENT, EMULATED));
        assertSame(MLX5_PRESENT, s.provider());
        assertEquals("auto picked the mlx5 NIC", s.reason());
    }

    @Test
    void autoFallsBackToTheEmulatedNicAndSaysWhy() {
        NicSelection s = Nics.select(NicChoice.AUTO, List.of(MLX5_ABSENT, EMULATED));
        assertSame(EMULATED, s.provider());
        assertEquals("auto picked the emulated NIC because mlx5: RDMA verbs: no RDMA device was found", s.reason());
    }

    @Test
    void forcedChoiceReportsWhyItIsUnavailable() {
        NicSelection s = Nics.select(NicChoice.MLX5, List.of(MLX5_ABSENT, EMULATED));
        assertFalse(s.found());
        assertTrue(s.reason().contains("no RDMA device"), s.reason());
        assertSame(EMULATED, Nics.select(NicChoice.EMULATED, List.of(MLX5_PRESENT, EMULATED)).provider());
    }

    @Test
    void parsesTheWordsUsersType() {
        assertEquals(NicChoice.EMULATED, NicChoice.parse(" Emulated "));
        assertThrows(IllegalArgumentException.class, () -> NicChoice.parse("ib"));
    }

    @Test
    void registrationContainsAndRejects() {
        assertThrows(IllegalArgumentException.class, () -> new MemoryRegistration(null, 0, 8, MemoryKind.DEVICE,
                NicAccess.HEAP, "x"));
        assertEquals(15, NicAccess.flags(NicAccess.HEAP));
    }
}

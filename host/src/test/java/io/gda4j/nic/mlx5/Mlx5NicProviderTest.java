package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.nic.Nic;
import io.gda4j.nic.NicChoice;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicOptions;
import io.gda4j.nic.NicProvider;
import io.gda4j.nic.NicSelection;
import io.gda4j.nic.Nics;
import io.gda4j.verbs.Verbs;
import io.gda4j.verbs.VerbsStatus;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/**
 * The provider as ServiceLoader and {@code --nic} see it, and the exact text a user gets on a machine without an
 * RDMA device (every machine here). The no-device checks are skipped, with the status, where a device exists.
 */
class Mlx5NicProviderTest {
    @Test
    void isFoundByServiceLoaderAndTriedFirst() {
        List<NicProvider> providers = Nics.providers();
        NicProvider mlx5 = providers.stream().filter(p -> p instanceof Mlx5NicProvider).findFirst()
                .orElseThrow(() -> new AssertionError("Mlx5NicProvider is not registered in META-INF/services: "
                        + providers));
        assertEquals(Nic.MLX5, mlx5.name());
        assertEquals(0, mlx5.autoPreference());
        assertEquals(mlx5, providers.get(0), "the real NIC comes first in auto order");
    }

    @Test
    void reasonIsTheVerbsSentenceWithoutADevice() {
        VerbsStatus status = Verbs.status();
        Optional<String> reason = new Mlx5NicProvider().unavailableReason();
        if (status.kind() == VerbsStatus.Kind.DEVICES_FOUND && status.mlx5Available()) {
            assertEquals(Optional.empty(), reason);
        } else {
            assertEquals(Optional.of(status.sentence()), reason);
        }
    }

    @Test
    void openWithoutADeviceSaysWhyInOneSentence() {
        VerbsStatus status = Verbs.status();
        assumeTrue(status.kind() != VerbsStatus.Kind.DEVICES_FOUND, "this machine has an RDMA device: "
                + status.sentence());
        NicException e = assertThrows(NicException.class, () -> new Mlx5NicProvider().open(NicOptions.defaults()));
        assertEquals("cannot open the mlx5 NIC: " + status.sentence(), e.getMessage());
        assertTrue(e.getMessage().contains("no RDMA device was found") || e.getMessage().contains("was not found"),
                e.getMessage());
        NicException named = assertThrows(NicException.class,
                () -> Mlx5Nic.open(new NicOptions("mlx5_7", 1, 0)));
        assertEquals(e.getMessage(), named.getMessage());
    }

    @Test
    void forcedMlx5ChoiceFailsWithTheReasonAndAutoSkipsIt() {
        VerbsStatus status = Verbs.status();
        assumeTrue(status.kind() != VerbsStatus.Kind.DEVICES_FOUND, "this machine has an RDMA device: "
                + status.sentence());
        NicSelection forced = Nics.select(NicChoice.MLX5);
        assertFalse(forced.found());
        assertEquals("the mlx5 NIC is not available: " + status.sentence(), forced.reason());
        NicException e = assertThrows(NicException.class, () -> Nics.open(NicChoice.MLX5, NicOptions.defaults()));
        assertEquals(forced.reason(), e.getMessage());
        assertTrue(Nics.select(NicChoice.AUTO).reason().contains("mlx5: " + status.sentence()),
                Nics.select(NicChoice.AUTO).reason());
    }

    @Test
    void eachSituationOfTheStatusMapsToAReason() {
        VerbsStatus absent = new VerbsStatus(VerbsStatus.Kind.LIBRARY_ABSENT, "libibverbs.so.1", "libmlx5.so.1",
                false, List.of(), "not found");
        assertEquals(Optional.of(absent.sentence()), Mlx5NicProvider.unavailableReason(absent));
        VerbsStatus noMlx5 = new VerbsStatus(VerbsStatus.Kind.DEVICES_FOUND, "libibverbs.so.1", "libmlx5.so.1",
                false, List.of("mlx5_0"), "1 found");
        assertTrue(Mlx5NicProvider.unavailableReason(noMlx5).orElseThrow().contains("libmlx5.so.1 is missing"));
        VerbsStatus ok = new VerbsStatus(VerbsStatus.Kind.DEVICES_FOUND, "libibverbs.so.1", "libmlx5.so.1", true,
                List.of("mlx5_0"), "1 found");
        assertEquals(Optional.empty(), Mlx5NicProvider.unavailableReason(ok));
    }
}

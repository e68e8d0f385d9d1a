package io.gda4j.world;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The close both worlds make ({@link LocalRanks#closeWorld}), on a world with no ranks (no GPU needed): it runs once,
 * every step runs even when an earlier one fails, and the first failure is thrown with the later ones suppressed.
 */
class LocalRanksCloseTest {
    private static LocalRanks noRanks() {
        return new LocalRanks(List.of(), WorldConfig.resolve(new Properties(), Map.of()), new ModuleTable());
    }

    @Test
    void closesOnceReleasingBeforeTheRanksAndRunningAfterLast() {
        LocalRanks local = noRanks();
        List<String> steps = new ArrayList<>();
        local.closeWorld(first -> {
            steps.add("release");
            return first;
        }, () -> steps.add("after"));
        local.closeWorld(first -> {
            steps.add("release again");
            return first;
        }, () -> steps.add("after again"));
        assertEquals(List.of("release", "after"), steps, "a second close does nothing");
    }

    @Test
    void aReturnedFailureIsThrownAfterEveryStep() {
        LocalRanks local = noRanks();
        IllegalStateException unmap = new IllegalStateException("unmap failed");
        IllegalStateException bootstrap = new IllegalStateException("bootstrap close failed");
        List<String> steps = new ArrayList<>();
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> local.closeWorld(first -> unmap,
                () -> {
                    steps.add("after");
                    throw bootstrap;
                }));
        assertSame(unmap, thrown, "the first failure");
        assertEquals(List.of("after"), steps, "the step after the ranks still ran");
        assertEquals(List.of(bootstrap), List.of(thrown.getSuppressed()), "the later failure rides along");
    }

    @Test
    void aReleaseThatThrowsStillLetsTheRestRun() {
        LocalRanks local = noRanks();
        IllegalStateException boom = new IllegalStateException("release threw");
        List<String> steps = new ArrayList<>();
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> local.closeWorld(first -> {
            throw boom;
        }, () -> steps.add("after")));
        assertSame(boom, thrown);
        assertEquals(List.of("after"), steps);
    }
}

package io.gda4j.world;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    /** A world whose "GPUs" have kernels for {@code busyPolls} polls (forever if negative), its wait timeout 50 ms. */
    private static LocalRanks withKernels(int busyPolls, AtomicInteger polls) {
        Properties p = new Properties();
        p.setProperty(WorldConfig.WAIT_TIMEOUT_PROP_NAME, "50");
        return new LocalRanks(List.of(), WorldConfig.resolve(p, Map.of()), new ModuleTable(),
                () -> busyPolls < 0 || polls.incrementAndGet() <= busyPolls ? List.of("GPU 0 (stand-in)") : List.of(),
                0);
    }

    @Test
    void kernelsThatNeverEndLeaveTheGpuSideAndStillCloseTheHostSide() {
        LocalRanks local = withKernels(-1, new AtomicInteger());
        List<String> steps = new ArrayList<>();
        KernelsStillRunningException e = assertThrows(KernelsStillRunningException.class, () -> local.closeWorld(
                first -> {
                    steps.add("release");
                    return first;
                }, () -> steps.add("after")));
        assertEquals(List.of("after"), steps, "nothing that frees GPU memory runs (it would wait for the kernel);"
                + " the host side's step does");
        assertEquals(List.of("GPU 0 (stand-in)"), e.gpus());
        assertTrue(e.getMessage().contains("end the process"), e.getMessage());
    }

    @Test
    void kernelsThatEndDuringTheDrainLetTheCloseGoOn() {
        AtomicInteger polls = new AtomicInteger();
        LocalRanks local = withKernels(3, polls);
        List<String> steps = new ArrayList<>();
        local.closeWorld(first -> {
            steps.add("release");
            return first;
        }, () -> steps.add("after"));
        assertEquals(List.of("release", "after"), steps);
        assertEquals(4, polls.get(), "asked until no GPU had kernels");
    }

    @Test
    void theDrainAbortsOnceAndOnlyWhereKernelsRun() {
        AtomicInteger aborts = new AtomicInteger();
        assertNull(LocalRanks.drain(List::of, aborts::incrementAndGet, 1_000_000));
        assertEquals(0, aborts.get(), "nothing runs: no abort flag goes up");
        AtomicInteger polls = new AtomicInteger();
        assertNull(LocalRanks.drain(() -> polls.incrementAndGet() <= 2 ? List.of("GPU 0") : List.of(),
                aborts::incrementAndGet, 1_000_000_000L));
        assertEquals(1, aborts.get());
        KernelsStillRunningException e = LocalRanks.drain(() -> List.of("GPU 1"), aborts::incrementAndGet, 1_000_000);
        assertEquals(List.of("GPU 1"), e.gpus());
        assertEquals(2, aborts.get());
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

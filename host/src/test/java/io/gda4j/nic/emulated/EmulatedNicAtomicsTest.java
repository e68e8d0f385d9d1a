package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.config.SettingException;
import io.gda4j.nic.HostPoster;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpSpec;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The emulated NIC's strict atomics on host memory: the engine asks for each ATOMIC_FA as a read, a pause and a
 * write ({@link QpExecutor#atomic} with a split), so NIC atomics from several QPs (a pair and a loopback QP, as IBGDA
 * peers and the rank itself) keep an exact sum, while another writer's atomics on the same word (a CPU thread here,
 * standing for the GPU's) are lost; with strict atomics off the same race loses nothing. The GPU side (the split in
 * {@code emulated_nic.cu}, the NIC-wide chain of {@link AtomicChain}) is {@code IbgdaAtomicsGpuTest}.
 */
class EmulatedNicAtomicsTest {
    static final long TIMEOUT = TimeUnit.SECONDS.toNanos(10);
    static final int REGION = 4096;

    HostMemoryPlatform platform;
    EmulatedNic nic;
    long heap;
    NicMemory mem;

    void open(boolean strictAtomics) {
        platform = new HostMemoryPlatform();
        nic = new EmulatedNic(platform, new EmulatedNicConfig("backoff", false, true, false, strictAtomics));
        heap = platform.allocate(REGION);
        platform.allowWrites(heap, REGION);
        mem = nic.registerMemory(new MemoryRegistration(null, heap, REGION, MemoryKind.DEVICE, NicAccess.HEAP, "heap"));
    }

    @AfterEach
    void close() {
        if (nic != null) {
            nic.close();
            assertTrue(platform.violations.isEmpty(), platform.violations.toString());
        }
    }

    long counter() {
        return new Pointer(heap).getLong(0);
    }

    /** Posts {@code perPoster} ATOMIC_FA of 1 on the counter from each poster, round-robin, and completes them all. */
    void addThroughTheNic(List<HostPoster> posters, int perPoster) throws TimeoutException {
        for (int i = 0; i < perPoster; i++) {
            for (HostPoster p : posters) {
                p.postFetchAdd(heap, mem.rkey(), 1, 0, nic.nullMemory().lkey(), TIMEOUT);
                p.ring();
            }
            nic.engine().doWork();
            for (HostPoster p : posters) {
                p.poll();
            }
        }
        long deadline = System.nanoTime() + TIMEOUT;
        for (HostPoster p : posters) {
            while (p.retiredIndex() < p.producerIndex() && System.nanoTime() < deadline) {
                nic.engine().doWork();
                p.poll();
            }
            p.quiet(TIMEOUT);
        }
    }

    @Test
    void nicAtomicsFromSeveralQpsKeepAnExactSum() throws TimeoutException {
        open(true);
        NicQp loopback = nic.createLoopbackQp(QpSpec.of(null, 64, "self"));
        try (QpPair qps = nic.createConnectedPair(QpSpec.of(null, 64, "a->b"), QpSpec.of(null, 64, "b->a"))) {
            addThroughTheNic(List.of(qps.first().hostPoster(), qps.second().hostPoster(), loopback.hostPoster()), 40);
            assertEquals(120, counter(), "a NIC's atomics are atomic with each other");
            assertEquals(120, platform.splitAtomics, "every ATOMIC_FA ran as a read, a pause and a write");
        } finally {
            loopback.close();
        }
    }

    /**
     * Batches of 50 NIC atomics on the counter, each while a CPU thread adds to it with its own atomics, until a batch
     * loses an update or {@code batches} are done (the CPU thread needs a core beside the engine's to race it, which
     * a busy machine gives now and then); returns {NIC adds, CPU adds} over all batches.
     */
    long[] raceAgainstAnotherWriter(int batches, boolean stopAtLoss) throws Exception {
        ByteBuffer word = new Pointer(heap).getByteBuffer(0, 8).order(ByteOrder.nativeOrder());
        long nicAdds = 0;
        long cpuAdds = 0;
        NicQp loopback = nic.createLoopbackQp(QpSpec.of(null, 64, "self"));
        List<HostPoster> self = List.of(loopback.hostPoster()); // one poster: it counts the QP's WQEs
        try {
            for (int b = 0; b < batches && !(stopAtLoss && counter() < nicAdds + cpuAdds); b++) {
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong added = new AtomicLong();
                Thread adder = new Thread(() -> {
                    long n = 0;
                    while (!stop.get()) {
                        HostMemoryPlatform.LONG_NATIVE.getAndAdd(word, 0, 1L);
                        n++;
                    }
                    added.set(n);
                }, "gpu-atomics-stand-in");
                adder.start();
                try {
                    addThroughTheNic(self, 50);
                    nicAdds += 50;
                } finally {
                    stop.set(true);
                    adder.join(TimeUnit.SECONDS.toMillis(10));
                }
                cpuAdds += added.get();
            }
        } finally {
            loopback.close();
        }
        return new long[] {nicAdds, cpuAdds};
    }

    @Test
    void strictAtomicsLoseAnotherWritersUpdatesOnTheSameWord() throws Exception {
        open(true);
        long[] adds = raceAgainstAnotherWriter(200, true);
        long expected = adds[0] + adds[1];
        assertTrue(adds[1] > 0, "the other writer ran");
        assertTrue(counter() < expected, "with strict atomics a NIC atomic is a read, a pause and a write: the CPU's "
                + "atomics in between must be lost, but the counter holds every one of " + expected + " adds");
    }

    @Test
    void lenientAtomicsHideTheRace() throws Exception {
        open(false);
        long[] adds = raceAgainstAnotherWriter(5, false);
        assertEquals(adds[0] + adds[1], counter(), "a single atomic of the memory loses nothing");
        assertEquals(0, platform.splitAtomics);
    }

    @Test
    void strictAtomicsAreASettingAndOnByDefault() {
        assertTrue(EmulatedNicConfig.SETTINGS.contains(EmulatedNicConfig.STRICT_ATOMICS));
        assertTrue(EmulatedNicConfig.resolve(new Properties(), Map.of()).strictAtomics());
        assertEquals(EmulatedNicConfig.ATOMIC_SPLIT_NANOS,
                EmulatedNicConfig.resolve(new Properties(), Map.of()).atomicSplitNanos());
        assertFalse(EmulatedNicConfig.resolve(new Properties(),
                Map.of(EmulatedNicConfig.STRICT_ATOMICS_ENV, "false")).strictAtomics());
        Properties on = new Properties();
        on.setProperty(EmulatedNicConfig.STRICT_ATOMICS_PROP_NAME, "true");
        assertTrue(EmulatedNicConfig.resolve(on, Map.of(EmulatedNicConfig.STRICT_ATOMICS_ENV, "false"))
                .strictAtomics(), "the property wins over the environment");
        SettingException bad = assertThrows(SettingException.class, () -> EmulatedNicConfig.resolve(new Properties(),
                Map.of(EmulatedNicConfig.STRICT_ATOMICS_ENV, "sometimes")));
        assertTrue(bad.getMessage().contains(EmulatedNicConfig.STRICT_ATOMICS_ENV), bad.getMessage());
        assertEquals(0, new EmulatedNicConfig("spin", false, true, false, false).atomicSplitNanos());
    }
}

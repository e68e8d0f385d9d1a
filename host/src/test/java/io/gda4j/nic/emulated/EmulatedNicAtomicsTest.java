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
import java.util.concurrent.atomic.AtomicLong;

/**
 * The emulated NIC's strict atomics on host memory: the engine asks for each ATOMIC_FA as a read, a pause and a write
 * ({@link QpExecutor#atomic} with a split), so NIC atomics from several QPs (a pair and a loopback QP, as IBGDA peers
 * and the rank itself) keep an exact sum, while another writer's atomic on the same word (a CPU atomic placed in the
 * pause, standing for the GPU's) is lost; with strict atomics off the same interleaving loses nothing. The GPU side
 * (the split in {@code emulated_nic.cu}, the NIC-wide chain of {@link AtomicChain}) is {@code IbgdaAtomicsGpuTest}.
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
     * {@code adds} NIC atomics of 1 on the counter through a loopback QP, each with one CPU atomic add of 1 on the same
     * word (standing for the GPU's own atomics) placed where it can fall between the NIC's read and write; returns
     * the CPU adds made.
     */
    long raceAgainstAnotherWriter(int adds) throws TimeoutException {
        AtomicLong cpuAdds = new AtomicLong();
        platform.interleavedWriter = target -> {
            ByteBuffer word = new Pointer(target).getByteBuffer(0, 8).order(ByteOrder.nativeOrder());
            HostMemoryPlatform.LONG_NATIVE.getAndAdd(word, 0, 1L);
            cpuAdds.incrementAndGet();
        };
        NicQp loopback = nic.createLoopbackQp(QpSpec.of(null, 64, "self"));
        try {
            addThroughTheNic(List.of(loopback.hostPoster()), adds);
        } finally {
            platform.interleavedWriter = null;
            loopback.close();
        }
        return cpuAdds.get();
    }

    @Test
    void strictAtomicsLoseAnotherWritersUpdatesOnTheSameWord() throws TimeoutException {
        open(true);
        long cpuAdds = raceAgainstAnotherWriter(50);
        assertEquals(50, cpuAdds, "the other writer ran once per NIC atomic");
        assertEquals(50, platform.splitAtomics, "every ATOMIC_FA ran as a read, a pause and a write");
        assertEquals(50, counter(), "with strict atomics a NIC atomic is a read, a pause and a write: an add by "
                + "another writer in the pause is overwritten, so only the NIC's 50 adds remain");
    }

    @Test
    void lenientAtomicsHideTheRace() throws TimeoutException {
        open(false);
        long cpuAdds = raceAgainstAnotherWriter(50);
        assertEquals(50, cpuAdds);
        assertEquals(100, counter(), "a single atomic of the memory loses nothing");
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

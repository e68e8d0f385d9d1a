package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.nic.HostPoster;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpSpec;

import org.junit.jupiter.api.AfterEach;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What the emulated NIC's engine tests stand on: a NIC over host memory whose engine the test drives by hand, and two
 * registered heaps of {@value #REGION} bytes, A and B. After each test the NIC is closed and nothing may have been
 * written outside the registered memory.
 */
abstract class TwoHeapNicTest {
    static final int REGION = 4096;
    static final long TIMEOUT = TimeUnit.SECONDS.toNanos(10);

    HostMemoryPlatform platform;
    EmulatedNic nic;
    long heapA;
    long heapB;
    NicMemory memA;
    NicMemory memB;

    /** Opens the NIC with {@code config} and registers heaps A and B. */
    void open(EmulatedNicConfig config) {
        platform = new HostMemoryPlatform();
        nic = new EmulatedNic(platform, config);
        heapA = platform.allocate(REGION);
        heapB = platform.allocate(REGION);
        platform.allowWrites(heapA, REGION);
        platform.allowWrites(heapB, REGION);
        memA = nic.registerMemory(new MemoryRegistration(null, heapA, REGION, MemoryKind.DEVICE, NicAccess.HEAP, "A"));
        memB = nic.registerMemory(new MemoryRegistration(null, heapB, REGION, MemoryKind.DEVICE, NicAccess.HEAP, "B"));
    }

    /** A connected QP pair "a->b" / "b->a" with send queues of {@code sqWqebbs}. */
    QpPair pair(int sqWqebbs) {
        return nic.createConnectedPair(QpSpec.of(null, sqWqebbs, "a->b"), QpSpec.of(null, sqWqebbs, "b->a"));
    }

    /** Rings {@code p}'s doorbell and runs the engine until every WQE posted on it has completed. */
    void complete(HostPoster p) throws TimeoutException {
        p.ring();
        long deadline = System.nanoTime() + TIMEOUT;
        while (p.retiredIndex() < p.producerIndex() && System.nanoTime() < deadline) {
            nic.engine().doWork();
            p.poll();
        }
        p.quiet(TIMEOUT);
    }

    @AfterEach
    void closeNic() {
        if (nic != null) {
            nic.close();
            assertTrue(platform.violations.isEmpty(), platform.violations.toString());
        }
    }
}

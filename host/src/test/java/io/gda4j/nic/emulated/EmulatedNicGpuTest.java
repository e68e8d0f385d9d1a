package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.nic.HostPoster;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpSpec;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The emulated NIC's CUDA executor, driven from the host ({@link HostPoster}) so it is tested apart from the GPU
 * poster: copies between two GPUs' memory, inline stores, atomics by the helper kernel, CQEs written by the stream,
 * the null region, and an error CQE.
 */
@Tag("gpu")
class EmulatedNicGpuTest {
    static final long TIMEOUT = TimeUnit.SECONDS.toNanos(10);
    static final int BYTES = 1 << 20;

    CudaContext gpu0;
    CudaContext gpu1;
    EmulatedNic nic;
    DeviceMemory a;
    DeviceMemory b;
    NicMemory memA;
    NicMemory memB;

    @BeforeEach
    void open() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        gpu0 = Cuda.device(0).primaryContext();
        gpu1 = Cuda.device(Cuda.deviceCount() > 1 ? 1 : 0).primaryContext();
        nic = new EmulatedNic(new CudaPlatform(), new EmulatedNicConfig("spin", true));
        a = gpu0.allocate(BYTES);
        b = gpu1.allocate(BYTES);
        a.fill((byte) 0);
        b.fill((byte) 0);
        memA = nic.registerMemory(MemoryRegistration.deviceHeap(gpu0, a.address(), BYTES, "A"));
        memB = nic.registerMemory(MemoryRegistration.deviceHeap(gpu1, b.address(), BYTES, "B"));
    }

    @AfterEach
    void close() {
        if (nic != null) {
            nic.close();
            a.close();
            b.close();
            gpu1.close();
            gpu0.close();
        }
    }

    QpPair pair() {
        return nic.createConnectedPair(QpSpec.of(gpu0, 256, "gpu0->gpu1"), QpSpec.of(gpu1, 256, "gpu1->gpu0"));
    }

    @Test
    void writesReadsInlineAndAtomicsLand() throws TimeoutException {
        try (QpPair qps = pair()) {
            HostPoster p = qps.first().hostPoster();
            byte[] data = new byte[100_000];
            new Random(1).nextBytes(data);
            a.copyFromHost(8, data, 0, data.length);
            p.postWrite(b.address() + 16, memB.rkey(), a.address() + 8, memA.lkey(), data.length, TIMEOUT);
            p.postWriteInline(b.address() + 200_000, memB.rkey(), new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9}, TIMEOUT);
            p.postWriteInline(b.address() + 200_016, memB.rkey(), new byte[] {9, 8, 7, 6, 5, 4, 3, 2}, TIMEOUT);
            p.postFetchAdd(b.address() + 300_000, memB.rkey(), 5, a.address() + 400_000, memA.lkey(), TIMEOUT);
            p.postFetchAdd(b.address() + 300_000, memB.rkey(), 6, 0, nic.nullMemory().lkey(), TIMEOUT);
            p.postRead(b.address() + 16, memB.rkey(), a.address() + 500_000, memA.lkey(), data.length, TIMEOUT);
            p.quiet(TIMEOUT);
            byte[] got = new byte[data.length];
            b.copyToHost(16, got, 0, got.length);
            assertArrayEquals(data, got, "WRITE");
            a.copyToHost(500_000, got, 0, got.length);
            assertArrayEquals(data, got, "READ back");
            byte[] inline = new byte[9];
            b.copyToHost(200_000, inline, 0, 9);
            assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9}, inline);
            byte[] eight = new byte[8];
            b.copyToHost(200_016, eight, 0, 8);
            assertArrayEquals(new byte[] {9, 8, 7, 6, 5, 4, 3, 2}, eight, "8-byte inline store (cuStreamWriteValue64)");
            assertEquals(11, b.readLong(300_000));
            assertEquals(0, a.readLong(400_000), "the first fetch-add returned the old value 0");
        }
    }

    @Test
    void faultsBecomeErrorCqes() throws TimeoutException {
        NicQp qp = nic.createLoopbackQp(QpSpec.of(gpu0, 64, "loopback"));
        try {
            HostPoster p = qp.hostPoster();
            p.postWrite(a.address() + BYTES - 4, memA.rkey(), a.address(), memA.lkey(), 8, TIMEOUT);
            CompletionErrorException e = assertThrows(CompletionErrorException.class, () -> p.quiet(TIMEOUT));
            assertEquals(CqeSyndrome.REMOTE_ACCESS, e.syndrome(), e.getMessage());
        } finally {
            qp.close();
        }
    }

    @Test
    void qpsOfTwoNicsOneAGpuUseTheResponderNicsKeys() throws TimeoutException {
        EmulatedNic other = new EmulatedNic(new CudaPlatform(), new EmulatedNicConfig("spin", true));
        try {
            NicMemory bOnOther = other.registerMemory(MemoryRegistration.deviceHeap(gpu1, b.address(), BYTES, "B"));
            try (QpPair qps = QpPair.connect(nic, QpSpec.of(gpu0, 64, "gpu0->gpu1"), other,
                    QpSpec.of(gpu1, 64, "gpu1->gpu0"))) {
                HostPoster p = qps.first().hostPoster();
                a.writeLong(0, 0x1234);
                b.writeLong(64, 40);
                p.postWrite(b.address(), bOnOther.rkey(), a.address(), memA.lkey(), 8, TIMEOUT);
                p.postFetchAdd(b.address() + 64, bOnOther.rkey(), 2, a.address() + 64, memA.lkey(), TIMEOUT);
                p.quiet(TIMEOUT);
                assertEquals(0x1234, b.readLong(0));
                assertEquals(42, b.readLong(64));
                assertEquals(40, a.readLong(64), "the fetched value came back through the staging slot");
                p.postWrite(b.address() + 128, memB.rkey(), a.address(), memA.lkey(), 8, TIMEOUT);
                CompletionErrorException e = assertThrows(CompletionErrorException.class, () -> p.quiet(TIMEOUT));
                assertEquals(CqeSyndrome.REMOTE_ACCESS, e.syndrome(), "a key of the requester's NIC: " + e);
            }
        } finally {
            other.close();
        }
    }

    @Test
    void heldWriteDataLandsAtTheFlushOnTheGpu() throws TimeoutException {
        nic.close();
        nic = new EmulatedNic(new CudaPlatform(), new EmulatedNicConfig("spin", true, true, true));
        memA = nic.registerMemory(MemoryRegistration.deviceHeap(gpu0, a.address(), BYTES, "A"));
        memB = nic.registerMemory(MemoryRegistration.deviceHeap(gpu1, b.address(), BYTES, "B"));
        NicQp flush = nic.createLoopbackQp(QpSpec.of(gpu1, 64, "flush at B"));
        try (QpPair qps = pair()) {
            byte[] data = new byte[4096];
            new Random(2).nextBytes(data);
            a.copyFromHost(0, data, 0, data.length);
            HostPoster p = qps.first().hostPoster();
            p.postWrite(b.address(), memB.rkey(), a.address(), memA.lkey(), data.length, TIMEOUT);
            p.quiet(TIMEOUT);
            a.fill((byte) 0); // the source may be reused after the CQE: the staged copy is what lands
            HostPoster f = flush.hostPoster();
            f.postFetchAdd(b.address() + 8192, memB.rkey(), 1, 0, nic.nullMemory().lkey(), TIMEOUT);
            f.quiet(TIMEOUT);
            byte[] got = new byte[data.length];
            b.copyToHost(0, got, 0, got.length);
            assertArrayEquals(data, got, "the WRITE's data, staged when it executed, landed at the flush");
        } finally {
            flush.close();
        }
    }
}

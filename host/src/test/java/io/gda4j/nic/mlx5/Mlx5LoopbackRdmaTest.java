package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.jna.Native;
import com.sun.jna.Pointer;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.CqeDecoder;
import io.gda4j.mlx5.CqeDescriptor;
import io.gda4j.mlx5.CqeOpcode;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.nic.DoorbellKind;
import io.gda4j.nic.HostPoster;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicOptions;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.QpState;
import io.gda4j.verbs.Verbs;
import io.gda4j.verbs.VerbsStatus;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * End to end on a real ConnectX: a loopback RC QP made through the SPI, host memory registered, an RDMA WRITE (and
 * an inline WRITE, the null-MR flush atomic, a failing WRITE) posted by the QP's {@link HostPoster}, which hands
 * them to libibverbs ({@link VerbsPoster}: the provider's post_send and poll_cq, rdma-core's barriers), checked by
 * the bytes and by the completion. (gda4j's own WQE encoder and doorbell run on the NIC in Mlx5IbgdaGpuTest.) Skipped, with the verbs status, where no mlx5 device
 * exists (every machine of this workplace); the GPU cases also need CUDA.
 */
@Tag("rdma")
class Mlx5LoopbackRdmaTest {
    static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    static final int BYTES = 4096;

    static void assumeMlx5Device() {
        VerbsStatus status = Verbs.status();
        assumeTrue(status.kind() == VerbsStatus.Kind.DEVICES_FOUND && status.mlx5Available(),
                "no mlx5 RDMA device here: " + status.sentence());
    }

    static long address(ByteBuffer direct) {
        return Pointer.nativeValue(Native.getDirectBufferPointer(direct));
    }

    static NicMemory register(Mlx5Nic nic, ByteBuffer direct, Set<NicAccess> access, String label) {
        return nic.registerMemory(new MemoryRegistration(null, address(direct), direct.capacity(),
                MemoryKind.HOST_MAPPED, access, label));
    }

    @Test
    void hostPostedWritesAtomicsAndAnErrorOnALoopbackQp() throws Exception {
        assumeMlx5Device();
        try (Mlx5Nic nic = Mlx5Nic.open(NicOptions.defaults())) {
            ByteBuffer src = ByteBuffer.allocateDirect(BYTES);
            ByteBuffer dst = ByteBuffer.allocateDirect(BYTES + 64).order(ByteOrder.nativeOrder());
            byte[] pattern = new byte[BYTES];
            for (int i = 0; i < BYTES; i++) {
                pattern[i] = (byte) (i * 31 + 7);
            }
            src.put(0, pattern);
            NicMemory srcMr = register(nic, src, Set.of(NicAccess.LOCAL_WRITE), "source");
            NicMemory dstMr = register(nic, dst, NicAccess.HEAP, "destination");
            assertEquals(address(dst), dstMr.address());
            assertNotEquals(0, dstMr.rkey());

            NicQp qp = nic.createLoopbackQp(new QpSpec(null, 64, 64, 64, "loopback"));
            assertEquals(QpState.RTS, qp.state());
            QpRings rings = qp.hostRings();
            assertTrue(rings.sqWqebbs() >= 64 && rings.cqeCount() >= rings.sqWqebbs(), rings::toString);
            assertEquals(DoorbellKind.MMIO, rings.doorbellKind());
            assertThrows(IllegalStateException.class, qp::deviceRings, "no GPU was named");

            HostPoster poster = qp.hostPoster();
            assertTrue(poster instanceof VerbsPoster, "an mlx5 QP posts from the host through libibverbs");
            long write = poster.postWrite(dstMr.address(), dstMr.rkey(), srcMr.address(), srcMr.lkey(), BYTES,
                    TIMEOUT_NANOS);
            poster.quiet(TIMEOUT_NANOS);
            byte[] landed = new byte[BYTES];
            dst.get(0, landed);
            assertArrayEquals(pattern, landed);
            ByteBuffer cq = new Pointer(rings.cqBuf()).getByteBuffer(0,
                    (long) rings.cqeCount() * CqeDescriptor.CQE_SIZE);
            DecodedCqe cqe = CqeDecoder.decode(cq, 0);
            assertEquals(CqeOpcode.REQ, cqe.cqeOpcode(), cqe::toString);
            assertEquals(qp.qpn(), cqe.qpn());
            assertEquals(write & 0xffff, cqe.wqeCounter());
            assertEquals(Mlx5Opcode.RDMA_WRITE, cqe.wqeOpcode());

            poster.postWriteInline(dstMr.address() + BYTES, dstMr.rkey(), new byte[] {1, 2, 3, 4, 5, 6, 7, 8},
                    TIMEOUT_NANOS);
            poster.quiet(TIMEOUT_NANOS);
            assertEquals(0x0807060504030201L, dst.order(ByteOrder.LITTLE_ENDIAN).getLong(BYTES));

            // The PCIe flush: ATOMIC_FA on a flag, the fetched value dropped through the null MR.
            if (nic.capabilities().atomics() && nic.capabilities().nullMemory()) {
                long flagAddress = dstMr.address() + BYTES + 8;
                dst.putLong(BYTES + 8, 0L);
                poster.postFetchAdd(flagAddress, dstMr.rkey(), 1, 0L, nic.nullMemory().lkey(), TIMEOUT_NANOS);
                poster.quiet(TIMEOUT_NANOS);
                long flag = dst.getLong(BYTES + 8);
                assertTrue(flag == 1 || flag == Long.reverseBytes(1L), "the flag after fetch-add: " + flag);
            }

            CompletionErrorException error = assertThrows(CompletionErrorException.class, () -> {
                poster.postWrite(dstMr.address(), dstMr.rkey() ^ 0x5a5a00, srcMr.address(), srcMr.lkey(), 8,
                        TIMEOUT_NANOS);
                poster.quiet(TIMEOUT_NANOS);
            });
            assertEquals(qp.qpn(), error.qpn());
            assertTrue(error.syndrome() == CqeSyndrome.REMOTE_ACCESS
                    || error.syndrome() == CqeSyndrome.REMOTE_INVAL_REQ, error::getMessage);
            assertEquals(QpState.ERROR, qp.state());
            assertThrows(NicException.class, () -> qp.connect(qp.address()), "QPs connect once");
        }
    }

    @Test
    void gpuMemoryIsReachableAndRingsMapIntoTheGpu() throws Exception {
        assumeMlx5Device();
        assumeTrue(Cuda.status().available(), () -> "no CUDA: " + Cuda.status().reason());
        try (CudaContext gpu = Cuda.device(0).primaryContext(); Mlx5Nic nic = Mlx5Nic.open(NicOptions.defaults())) {
            DeviceMemory heap = gpu.allocate(1 << 20);
            heap.fill((byte) 0);
            NicMemory heapMr = nic.registerMemory(MemoryRegistration.deviceHeap(gpu, heap.address(),
                    heap.sizeBytes(), "GPU heap"));
            ByteBuffer src = ByteBuffer.allocateDirect(BYTES);
            for (int i = 0; i < BYTES; i++) {
                src.put(i, (byte) (i ^ 0x5c));
            }
            NicMemory srcMr = register(nic, src, Set.of(NicAccess.LOCAL_WRITE), "source");
            NicQp hostQp = nic.createLoopbackQp(new QpSpec(null, 64, 64, 64, "host loopback"));
            HostPoster poster = hostQp.hostPoster();
            poster.postWrite(heapMr.address() + 4096, heapMr.rkey(), srcMr.address(), srcMr.lkey(), BYTES,
                    TIMEOUT_NANOS);
            poster.quiet(TIMEOUT_NANOS);
            byte[] back = new byte[BYTES];
            heap.copyToHost(4096, back, 0, BYTES);
            byte[] expected = new byte[BYTES];
            src.get(0, expected);
            assertArrayEquals(expected, back, "host memory -> GPU memory over the NIC");

            NicQp gpuQp;
            try {
                gpuQp = nic.createLoopbackQp(QpSpec.of(gpu, 256, "GPU loopback"));
            } catch (NicException e) {
                assumeTrue(!e.getMessage().contains("PeerMappingOverride"), e.getMessage());
                throw e;
            }
            QpRings device = gpuQp.deviceRings();
            QpRings host = gpuQp.hostRings();
            assertEquals(host.qpn(), device.qpn());
            assertEquals(host.sqWqebbs(), device.sqWqebbs());
            assertEquals(host.doorbell() & 0xfff, device.doorbell() & 0xfff, "bf.reg keeps its offset in the UAR page");
            gpuQp.close();
            assertThrows(IllegalStateException.class, gpuQp::hostRings);
        }
    }
}

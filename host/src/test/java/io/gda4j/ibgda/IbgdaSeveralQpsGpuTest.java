package io.gda4j.ibgda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.nic.NicConfig;
import io.gda4j.transport.Transport;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.WorldConfig;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;

/**
 * Several QPs per peer ({@code GDA4J_IBGDA_QPS_PER_PEER}) on the strict emulated NIC, whose QPs run on streams of
 * their own, so nothing orders two of them: 8 blocks of 4 warps each put a slice to rank 1 (an unbound Peer spreads
 * the warps over the QPs, a bound one puts warp g on channel g), then the last block fences the peer and signals.
 * Rank 1's reader, launched first, waits for the signal and counts the words of the data that are not there yet:
 * none may be (the fence drained the peer's other QPs), every QP carried some of the warps, and all of it landed.
 */
@Tag("gpu")
class IbgdaSeveralQpsGpuTest {
    static final long HEAP = 16L << 20;
    static final int BLOCKS = 8;
    static final int WARPS = 4;
    static final long SLICE = 16 << 10;

    static LocalWorld world(int qps) {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        List<Integer> gpus = GpuWorlds.gpus();
        System.setProperty(NicConfig.NIC_PROP_NAME, "emulated");
        System.setProperty(IbgdaConfig.QPS_PER_PEER_PROP_NAME, Integer.toString(qps));
        try {
            return LocalWorld.create(WorldConfig.builder().gpus(gpus).heapSizeBytes(HEAP)
                    .waitTimeout(Duration.ofSeconds(20)).transport(Transport.IBGDA.label()).build());
        } finally {
            System.clearProperty(NicConfig.NIC_PROP_NAME);
            System.clearProperty(IbgdaConfig.QPS_PER_PEER_PROP_NAME);
        }
    }

    @ParameterizedTest(name = "{0} QPs per peer, bound to channels: {1}")
    @CsvSource({"1, false", "4, false", "4, true", "3, true"})
    void theFencedSignalCoversEveryWarpsDataOnEveryQp(int qps, boolean bound) {
        try (LocalWorld w = world(qps)) {
            assertEquals(Transport.IBGDA, w.transport(0, 1));
            Rank r0 = w.rank(0);
            Rank r1 = w.rank(1);
            long bytes = (long) BLOCKS * WARPS * SLICE;
            HeapBuffer data = w.heap().allocate(bytes);
            HeapBuffer sig = w.heap().allocateSignals(1);
            for (int round = 1; round <= 10; round++) {
                long pattern = 0x5eed0000_00000000L | round;
                ByteBuffer src = ByteBuffer.allocate((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
                for (int i = 0; i < bytes / 8; i++) {
                    src.putLong(i * 8, pattern ^ i);
                }
                r0.writeHeap(data.offset(), src.array());
                r1.fillHeap(data.offset(), bytes, (byte) 0);
                try (DeviceMemory done = r0.context().allocate(16); DeviceMemory qpOut = r0.context().allocate(64);
                     DeviceMemory status = r0.context().allocate(16); DeviceMemory check = r1.context().allocate(16);
                     CudaStream reader = r1.context().createStream()) {
                    done.fill((byte) 0);
                    status.fill((byte) 0);
                    check.fill((byte) 0);
                    r1.kernel("ibgda", "gda4j_ibgda_check_after_signal").launch(1, 256, 0, reader, KernelArgs
                            .create().pointer(r1.deviceView()).i64(data.offset()).i64(bytes).i64(sig.offset())
                            .i64(round).i64(pattern).pointer(check.pointer()));
                    r0.kernel("ibgda", "gda4j_ibgda_warps_then_signal").launch(BLOCKS, 32 * WARPS, 0, r0.stream(),
                            KernelArgs.create().pointer(r0.deviceView()).i32(1).i64(data.offset())
                                    .i64(data.offset()).i64(SLICE).i64(sig.offset()).i64(round).i32(bound ? 1 : 0)
                                    .pointer(done.pointer()).pointer(qpOut.pointer()).pointer(status.pointer()));
                    r0.stream().synchronize();
                    reader.synchronize();
                    w.checkErrors();
                    assertEquals(0, (int) status.readLong(0), "sender status");
                    assertEquals(0, check.readLong(8), "reader status");
                    assertEquals(0, check.readLong(0), "round " + round + ": words of the data not yet at rank 1"
                            + " when its signal was: the signal overtook data on another QP");
                    for (int i = 0; i < 8; i++) {
                        long reserved = qpOut.readLong(8L * i);
                        if (i < qps) {
                            assertTrue(reserved >= round, "QP " + i + " carried no warp's put (reserved " + reserved
                                    + " WQEBBs after " + round + " rounds)");
                        } else {
                            assertEquals(0, reserved, "the peer has only " + qps + " QPs");
                        }
                    }
                }
            }
        }
    }
}

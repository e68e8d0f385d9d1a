package io.gda4j.samples;

import io.gda4j.cuda.Cuda;
import io.gda4j.nic.NicConfig;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.WorldConfig;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The user-style ring all-gather ({@link RingAllGather}, its PTX built from {@code samples/kernels/ring_allgather.cu}
 * as the README says) gathers every rank's chunk byte for byte, with 2 and 4 ranks on one GPU (each rank's kernel
 * resolved right before its launch, which deadlocked while modules were loaded per rank) and over every transport.
 */
@Tag("gpu")
@Timeout(120)
class RingAllGatherGpuTest {
    private static final byte POISON = (byte) 0xA5;

    static Stream<Arguments> worlds() {
        List<Arguments> cases = new ArrayList<>();
        for (String transport : List.of("p2p", "proxy", "ibgda")) {
            for (int ranks : new int[] {2, 4}) {
                cases.add(Arguments.of(transport, ranks));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{1} ranks on GPU 0 over {0}")
    @MethodSource("worlds")
    void everyRankEndsWithEveryChunk(String transport, int ranks) {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        System.setProperty(NicConfig.NIC_PROP_NAME, "emulated");
        LocalWorld world;
        try {
            world = LocalWorld.create(WorldConfig.builder().gpus(Collections.nCopies(ranks, 0))
                    .heapSizeBytes(8L << 20).waitTimeout(Duration.ofSeconds(10)).transport(transport).build());
        } finally {
            System.clearProperty(NicConfig.NIC_PROP_NAME);
        }
        // An odd size: the block-scoped copy's vector body and byte tail both run.
        long chunk = 64 * 1024 + 13;
        try (world; RingAllGather gather = new RingAllGather(world, chunk)) {
            for (int round = 1; round <= 3; round++) {
                byte[][] contributions = new byte[ranks][];
                for (Rank r : world.localRanks()) {
                    byte[] all = new byte[(int) (chunk * ranks)];
                    Arrays.fill(all, POISON);
                    byte[] mine = pattern(round, r.rank(), (int) chunk);
                    contributions[r.rank()] = mine;
                    System.arraycopy(mine, 0, all, (int) (chunk * r.rank()), mine.length);
                    r.writeHeap(gather.buffer().offset(), all);
                }
                gather.run();
                byte[] expected = new byte[(int) (chunk * ranks)];
                for (int c = 0; c < ranks; c++) {
                    System.arraycopy(contributions[c], 0, expected, (int) (chunk * c), (int) chunk);
                }
                for (Rank r : world.localRanks()) {
                    byte[] got = new byte[expected.length];
                    r.readHeap(gather.buffer().offset(), got);
                    final int rr = r.rank();
                    final int rd = round;
                    assertArrayEquals(expected, got, () -> "rank " + rr + " after round " + rd + " over " + transport);
                }
            }
        }
    }

    private static byte[] pattern(int round, int rank, int length) {
        byte[] b = new byte[length];
        long x = 0x9E3779B97F4A7C15L * (round * 31L + rank + 1);
        for (int i = 0; i < length; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b[i] = (byte) x;
        }
        return b;
    }
}

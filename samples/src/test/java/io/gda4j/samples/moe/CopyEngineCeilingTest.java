package io.gda4j.samples.moe;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The ceiling's plan: a slot per rank, every peer on another GPU, each rank starting on a different peer. */
class CopyEngineCeilingTest {
    @Test
    void eachRankCopiesToEveryOtherRankStartingWithTheNext() {
        assertArrayEquals(new int[] {2, 3, 0}, CopyEngineCeiling.peerOrder(1, 4));
        assertArrayEquals(new int[] {0}, CopyEngineCeiling.peerOrder(1, 2));
        for (int r = 0; r < 8; r++) {
            assertEquals(r == 7 ? 0 : r + 1, CopyEngineCeiling.peerOrder(r, 8)[0], "rank " + r + " starts elsewhere");
        }
    }

    @Test
    void peersOnTheSameGpuAreNotCountedAndSlotsAreWholeMebibytes() {
        int[] gpus = {0, 0, 2, 2};   // ranks 0,1 on one GPU, 2,3 on another
        assertEquals(2, CopyEngineCeiling.peersOnOtherGpus(gpus, 0));
        assertEquals(0, CopyEngineCeiling.peersOnOtherGpus(new int[] {0, 0}, 1));
        assertEquals(32L << 20, CopyEngineCeiling.bytesPerPeer(256L << 20, 8));
        assertEquals(85L << 20, CopyEngineCeiling.bytesPerPeer(256L << 20, 3));
    }

    @Test
    void theFigureIsARanksBytesOverTheMedianSlowestTime() {
        CopyEngineCeiling.Result r = new CopyEngineCeiling.Result(3_000_000_000L, new double[] {10.0, 8.0, 9.0});
        assertEquals(3e9 / 9e6, r.gbps(), 1e-9);
    }
}

package io.gda4j.samples.moe;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The copy engines' ceiling for an all-to-all, the yardstick of {@code gda4j moe}'s link columns: every rank copies
 * {@code bytesPerPeer} to every rank on another GPU at once ({@code cuMemcpyPeerAsync} on its stream, peer after peer
 * starting with the next rank, so each GPU sends and receives at the same time, as the MoE calls do), all ranks
 * released together by a {@link LaunchGate}. Where another process drives the peer the copy goes into its heap as
 * mapped here ({@code cuMemcpyAsync}: the same copy engines). A rank's share of a heap buffer of {@code n} slots:
 * rank r writes its bytes into slot r of every peer's buffer and copies from its own slot r, which no peer writes.
 */
public final class CopyEngineCeiling {
    private CopyEngineCeiling() {
    }

    /** What one measurement found: the bytes each rank sent to other GPUs per repetition, and the slowest times. */
    public record Result(long bytesPerRank, double[] slowestMillis) {
        /** GB/s (10^9 B/s) of the median repetition: a rank's bytes to other GPUs over the slowest rank's time. */
        public double gbps() {
            double[] sorted = slowestMillis.clone();
            Arrays.sort(sorted);
            double ms = sorted[sorted.length / 2];
            return bytesPerRank / (ms * 1e6);
        }
    }

    /**
     * The bytes per peer a heap buffer of {@code bufferBytes} gives {@code worldSize} ranks: a slot each, whole MiB.
     */
    public static long bytesPerPeer(long bufferBytes, int worldSize) {
        return bufferBytes / worldSize >> 20 << 20;
    }

    /**
     * Measures {@code repetitions} times, each {@code iterations} rounds of every rank's copies behind one gate, after
     * one untimed round; null where no rank has a peer on another GPU. Every process of the world calls it at the same
     * point, with no kernel of this world running ({@code buffer}: a heap buffer of at least n x bytesPerPeer).
     *
     * @param gpus which ranks share a GPU ({@link RankGpus#of}); pairs on one GPU are skipped
     */
    public static Result measure(World world, HeapBuffer buffer, int[] gpus, long bytesPerPeer, int iterations,
                                 int repetitions) {
        int n = world.size();
        if (buffer.sizeBytes() < n * bytesPerPeer) {
            throw new IllegalArgumentException("a heap buffer of " + buffer.sizeBytes() + " bytes holds no " + n
                    + " slots of " + bytesPerPeer);
        }
        long peersPerRank = 0;
        for (int r = 0; r < n; r++) {
            peersPerRank = Math.max(peersPerRank, peersOnOtherGpus(gpus, r));
        }
        if (peersPerRank == 0) {
            return null;
        }
        List<Rank> ranks = world.localRanks();
        CudaEvent[][] events = new CudaEvent[n][];
        double[] slowest = new double[repetitions];
        LaunchGate gate = new LaunchGate(world);
        try {
            for (Rank r : ranks) {
                events[r.rank()] = new CudaEvent[] {r.context().createEvent(), r.context().createEvent()};
            }
            world.barrier();
            for (int rep = -1; rep < repetitions; rep++) {
                try {
                    for (Rank r : ranks) {
                        gate.hold(r);
                    }
                    for (Rank r : ranks) {
                        events[r.rank()][0].record(r.stream());
                        for (int i = 0; i < (rep < 0 ? 1 : iterations); i++) {
                            copyToEveryPeer(world, r, buffer, gpus, bytesPerPeer);
                        }
                        events[r.rank()][1].record(r.stream());
                    }
                } finally {
                    gate.open();
                }
                for (Rank r : ranks) {
                    r.synchronize();
                }
                if (rep >= 0) {
                    for (Rank r : ranks) {
                        slowest[rep] = Math.max(slowest[rep],
                                events[r.rank()][1].elapsedMillisSince(events[r.rank()][0]));
                    }
                }
            }
            gate.checkStartLine();
        } finally {
            try {
                gate.close();
            } finally {
                for (CudaEvent[] pair : events) {
                    if (pair != null) {
                        pair[0].close();
                        pair[1].close();
                    }
                }
            }
        }
        double[] all = GatedSteps.slowestOfEveryProcess(world, slowest);
        return new Result(peersPerRank * bytesPerPeer * iterations, all);
    }

    /** How many ranks are on another GPU than {@code rank}'s. */
    static int peersOnOtherGpus(int[] gpus, int rank) {
        int count = 0;
        for (int p = 0; p < gpus.length; p++) {
            count += gpus[p] != gpus[rank] ? 1 : 0;
        }
        return count;
    }

    /** The order rank r copies in: r + 1, r + 2, ... (mod n), so no two ranks start on the same destination. */
    static int[] peerOrder(int rank, int worldSize) {
        int[] order = new int[worldSize - 1];
        for (int i = 1; i < worldSize; i++) {
            order[i - 1] = (rank + i) % worldSize;
        }
        return order;
    }

    private static void copyToEveryPeer(World world, Rank r, HeapBuffer buffer, int[] gpus, long bytes) {
        CudaStream s = r.stream();
        long slot = buffer.offset() + r.rank() * bytes;
        DevicePointer from = DevicePointer.of(r.heapBase() + slot);
        for (int p : peerOrder(r.rank(), world.size())) {
            if (gpus[p] == gpus[r.rank()]) {
                continue;
            }
            Optional<Rank> local = world.localRank(p);
            if (local.isPresent()) {
                Rank peer = local.get();
                s.copyPeerAsync(DevicePointer.of(peer.heapBase() + slot), peer.context(), from, r.context(), bytes);
            } else {
                s.copyAsync(DevicePointer.of(((ProcessWorld) world).peerHeapAddress(p) + slot), from, bytes);
            }
        }
    }
}

package io.gda4j.samples;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.Optional;

/**
 * The copy engines' one-way bandwidth from a rank's heap into a peer's, the reference line of {@code gda4j bandwidth}
 * and {@code gda4j moe}: cuMemcpyPeerAsync between the two ranks' contexts, or, where another process drives the
 * peer, cuMemcpyDtoDAsync into the peer's heap as mapped here by CUDA IPC (the same copy-engine path, without the
 * peer's context, which lives in its own process). Timed with CUDA events around back-to-back copies on the rank's
 * stream, after one untimed copy.
 */
final class CopyEngineBandwidth {
    private CopyEngineBandwidth() {
    }

    /**
     * GB/s (10^9 bytes per second), the median of {@code repetitions} measurements of {@code iterations} copies of
     * {@code bytes} from {@code rank}'s heap at {@code srcOffset} to {@code peer}'s heap at {@code dstOffset}, timed
     * between {@code start} and {@code stop} (events of {@code rank}'s context).
     */
    static double gbps(World world, Rank rank, int peer, long srcOffset, long dstOffset, long bytes, int iterations,
                       int repetitions, CudaEvent start, CudaEvent stop) {
        CudaStream s = rank.stream();
        DevicePointer from = DevicePointer.of(rank.heapBase() + srcOffset);
        Optional<Rank> local = world.localRank(peer);
        Runnable copy;
        if (local.isPresent()) {
            Rank p = local.get();
            DevicePointer to = DevicePointer.of(p.heapBase() + dstOffset);
            copy = () -> s.copyPeerAsync(to, p.context(), from, rank.context(), bytes);
        } else {
            // The mapping itself: a proxy link's peer entry carries no heap address.
            DevicePointer to = DevicePointer.of(((ProcessWorld) world).peerHeapAddress(peer) + dstOffset);
            copy = () -> s.copyAsync(to, from, bytes);
        }
        copy.run(); // warm-up
        double[] gbps = new double[repetitions];
        for (int rep = 0; rep < repetitions; rep++) {
            start.record(s);
            for (int i = 0; i < iterations; i++) {
                copy.run();
            }
            stop.record(s);
            stop.synchronize();
            gbps[rep] = PutBandwidth.rate(bytes, iterations, stop.elapsedMillisSince(start));
        }
        return PutBandwidth.median(gbps);
    }
}

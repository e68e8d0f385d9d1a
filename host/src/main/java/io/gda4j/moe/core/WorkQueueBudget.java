package io.gda4j.moe.core;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Whether a GPU's streams each get a hardware work queue of their own, which the MoE kernels need.
 *
 * <p>The CUDA driver gives a context {@code CUDA_DEVICE_MAX_CONNECTIONS} work queues (its default is 8; gda4j sets 32,
 * the most, when the environment does not set it: io.gda4j.cuda.DriverEnvironment) and maps every stream onto one of
 * them. A queue is served in order: an
 * operation that must wait for a kernel of its own stream (an event record, the next kernel) holds up everything
 * queued behind it, whichever stream it came from. The MoE kernels of ranks that share a GPU, and the copies and
 * signals that the host-driven transports (proxy, emulated NIC) queue on their own streams, wait for each other. Once
 * a transport's stream shares a queue with a rank's stream holding an event record behind that rank's dispatch, the
 * transport's next signal waits for the dispatch to end and the dispatch waits for the signal: a deadlock, seen as a
 * counter that stays at 0 (issue 9: 4 ranks on one GPU over the proxy, 8 rank streams + 12 channel streams).
 */
public final class WorkQueueBudget {
    static final String ENV = "CUDA_DEVICE_MAX_CONNECTIONS";
    /** The driver's facts, read through its parser (io.gda4j.cuda keeps them): the default, and the ceiling. */
    static final int DEFAULT_CONNECTIONS = Cuda.maxConnectionsFor(null);
    static final int MAX_CONNECTIONS = Cuda.maxConnectionsFor(Integer.toString(Integer.MAX_VALUE));

    private WorkQueueBudget() {
    }

    /** The work queues a context gets for a value of {@value #ENV} (null: unset), as the driver reads it. */
    static int connections(String envValue) {
        return Cuda.maxConnectionsFor(envValue);
    }

    /** The work queues of contexts created by this process (its {@value #ENV}, or 32 that gda4j set). */
    public static int connections() {
        return Cuda.deviceMaxConnections();
    }

    /**
     * Why {@code streams} open streams on GPU {@code gpu} (with {@code ranks} ranks on it) cannot each have a queue
     * of their own, or null when they can.
     */
    static String problem(int gpu, int ranks, int streams, int connections, String envValue) {
        return problem(gpu, ranks, streams, 0, connections, envValue);
    }

    /**
     * As {@link #problem(int, int, int, int, String)}, where {@code streams} includes {@code communicationStreams} MoE
     * communication streams (io.gda4j.moe.MoeConfig#communicationStream()) about to be made: the message names them, and
     * turning them off is one remedy.
     */
    static String problem(int gpu, int ranks, int streams, int communicationStreams, int connections, String envValue) {
        if (streams <= connections) {
            return null;
        }
        String now = envValue == null || envValue.isBlank() ? "unset, so " + DEFAULT_CONNECTIONS : "'" + envValue.trim()
                + "', so " + connections;
        String remedy = streams <= MAX_CONNECTIONS
                ? "set " + ENV + "=" + MAX_CONNECTIONS + " in the environment before the JVM starts"
                : "put fewer ranks on GPU " + gpu + " (even " + ENV + "=" + MAX_CONNECTIONS + " is too few)";
        String comm = communicationStreams == 0 ? "" : ", the " + communicationStreams + " MoE communication stream"
                + (communicationStreams == 1 ? "" : "s") + " asked for,";
        if (communicationStreams > 0 && streams - communicationStreams <= connections) {
            remedy += ", or leave the MoE communication stream off (MoeConfig.communicationStream(false); gda4j moe"
                    + " without --comm-stream)";
        }
        return String.format(Locale.ROOT, "GPU %d has %d CUDA streams (the work and control streams of its %d rank%s%s and"
                + " the transports' copy and signal streams), more than the %d hardware work queues its context has (%s"
                + " is %s). Streams that share a queue run in order, so a transport's signal could wait behind a rank's"
                + " work queued after its MoE kernel, which waits for that signal: a deadlock. To fix it, %s, or use the"
                + " p2p transport between ranks on one GPU.", gpu, streams, ranks, ranks == 1 ? "" : "s", comm,
                connections, ENV, now, remedy);
    }

    /**
     * Why the streams of a GPU of {@code world} could share hardware work queues, or null, with
     * {@code communicationStreamsPerRank} more streams for each local rank (the MoE communication streams a
     * high-throughput rank makes, not open yet). Counts every open stream of the ranks' contexts on each GPU: the
     * ranks' own and those the transports made.
     */
    public static String problem(World world, int communicationStreamsPerRank) {
        Map<Integer, Set<CudaContext>> contexts = new TreeMap<>();
        Map<Integer, Integer> ranks = new HashMap<>();
        for (Rank r : world.localRanks()) {
            int gpu = r.device().ordinal();
            contexts.computeIfAbsent(gpu, g -> Collections.newSetFromMap(new IdentityHashMap<>())).add(r.context());
            ranks.merge(gpu, 1, Integer::sum);
        }
        // Java's environment copy does not show what gda4j set for the driver: ask the CUDA layer.
        int connections = Cuda.deviceMaxConnections();
        String env = Integer.toString(connections);
        for (Map.Entry<Integer, Set<CudaContext>> e : contexts.entrySet()) {
            int communication = communicationStreamsPerRank * ranks.get(e.getKey());
            int streams = communication;
            for (CudaContext c : e.getValue()) {
                streams += c.openStreams();
            }
            String p = problem(e.getKey(), ranks.get(e.getKey()), streams, communication, connections, env);
            if (p != null) {
                return p;
            }
        }
        return null;
    }
}

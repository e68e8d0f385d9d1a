package io.gda4j.moe;

import io.gda4j.moe.check.MoeReference;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ht.HighThroughputPart;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.tensor.DeviceTensor;
import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstreamCaptureMode;
import jcuda.driver.JCudaDriver;

import java.util.Arrays;
import java.util.Random;

/**
 * High-throughput dispatch and combine captured in a CUDA graph per rank and replayed with new data, each replay
 * checked by a {@link MoeReferenceCheck}. The io.gda4j.cuda layer has no graphs, so this drives JCuda's graph calls
 * itself, as MoeLowLatencyGpuTest does; public for the samples' timing test, which times the calls after such a replay.
 */
public final class MoeGraphReplay {
    private MoeGraphReplay() {
    }

    /**
     * Dispatch and combine of every rank captured once in a CUDA graph per rank (with {@code y} of maxRecvTokens
     * rows, as a captured combine must take), then replayed {@code replays} times with new tokens, weights and
     * expert outputs each time (the routing stays: a new routing needs a new layout, which synchronises with the
     * host); every replay is compared with the reference. Returns the hash of the last replay's outputs. The capture
     * begins on each rank's stream; with a communication stream the calls fork it in and the capture joins it back
     * ({@link MoeRank#computeStreamWaitForLastCall()}).
     */
    public static long runCaptured(MoeReferenceCheck check, MoeRouting.Kind kind, long seed, int[] tokens,
                                   int replays) {
        MoeBuffer buffer = check.buffer();
        HighThroughputSizing s = buffer.sizing();
        HighThroughputPart c = s.config();
        int n = s.worldSize();
        Random rnd = new Random(seed);
        MoeReferenceCheck.Routed routed = check.route(kind, rnd, tokens);
        int[][] idx = routed.topkIdx();
        MoeReference.Input[] in = routed.inputs();
        MoeHandle[] handles = routed.handles();
        MoeDispatchResult[] got = new MoeDispatchResult[n];
        DeviceTensor[] out = new DeviceTensor[n];
        CUgraphExec[] exec = new CUgraphExec[n];
        try {
            for (int r : check.locals()) {
                MoeRank m = buffer.rank(r);
                exec[r] = capture(m, () -> {
                    got[r] = m.dispatch(check.x(r, tokens[r]), check.scales(r, tokens[r]),
                            check.topkIdx(r, tokens[r]), check.topkWeights(r, tokens[r]), handles[r]);
                    out[r] = m.combine(check.y(r, s.maxRecvTokens()), got[r]);
                });
            }
            long hash = 0;
            for (int replay = 0; replay < replays; replay++) {
                short[][] yRows = new short[n][];
                for (int r = 0; r < n; r++) {
                    in[r] = check.upload(r, MoeRouting.input(s, r, tokens[r], idx[r], rnd));
                    // Expert outputs for every row dispatch can deliver; the reference reads the first `count`.
                    short[] rows = MoeRouting.bf16Rows(s.maxRecvTokens(), c.hidden(), rnd);
                    if (check.local(r)) {
                        check.writeY(r, MoeReferenceCheck.shorts(rows));
                    }
                    yRows[r] = rows;
                }
                buffer.world().barrier();
                for (int r : check.locals()) {
                    buffer.rank(r).rank().context().makeCurrent();
                    check(JCudaDriver.cuGraphLaunch(exec[r], buffer.rank(r).stream().handle()), "cuGraphLaunch", r);
                }
                for (int r : check.locals()) {
                    buffer.rank(r).stream().synchronize();
                }
                buffer.checkErrors();
                hash = 0xcbf29ce484222325L;
                MoeReference.Received[] want = new MoeReference.Received[n];
                short[][] used = new short[n][];
                for (int r = 0; r < n; r++) {
                    want[r] = MoeReference.dispatch(s, in, r);
                    if (check.local(r)) {
                        hash = MoeReferenceCheck.fnv(hash, check.checkDispatch(r, got[r], want[r]));
                    }
                    used[r] = Arrays.copyOf(yRows[r], want[r].count() * c.hidden());
                }
                for (int r : check.locals()) {
                    hash = MoeReferenceCheck.fnv(hash, check.checkCombine(r, out[r], want, used, tokens[r]));
                }
            }
            return hash;
        } finally {
            for (CUgraphExec e : exec) {
                if (e != null) {
                    JCudaDriver.cuGraphExecDestroy(e);
                }
            }
        }
    }

    /**
     * A dispatch alone captured in a CUDA graph per rank and replayed {@code replays} times with new tokens and
     * weights, each replay checked against the reference (every replay writes the region the capture chose, so each
     * waits at its entry for every rank's), then an eager combine of it, checked too. Returns the hash of the last
     * replay's rows.
     */
    public static long runCapturedDispatches(MoeReferenceCheck check, MoeRouting.Kind kind, long seed, int[] tokens,
                                             int replays) {
        MoeBuffer buffer = check.buffer();
        HighThroughputSizing s = buffer.sizing();
        HighThroughputPart c = s.config();
        int n = s.worldSize();
        Random rnd = new Random(seed);
        MoeReferenceCheck.Routed routed = check.route(kind, rnd, tokens);
        int[][] idx = routed.topkIdx();
        MoeReference.Input[] in = routed.inputs();
        MoeHandle[] handles = routed.handles();
        MoeDispatchResult[] got = new MoeDispatchResult[n];
        CUgraphExec[] exec = new CUgraphExec[n];
        try {
            for (int r : check.locals()) {
                MoeRank m = buffer.rank(r);
                exec[r] = capture(m, () -> got[r] = m.dispatch(check.x(r, tokens[r]),
                        check.scales(r, tokens[r]), check.topkIdx(r, tokens[r]), check.topkWeights(r, tokens[r]),
                        handles[r]));
            }
            long hash = 0;
            MoeReference.Received[] want = new MoeReference.Received[n];
            for (int replay = 0; replay < replays; replay++) {
                for (int r = 0; r < n; r++) {
                    in[r] = check.upload(r, MoeRouting.input(s, r, tokens[r], idx[r], rnd));
                }
                buffer.world().barrier();
                for (int r : check.locals()) {
                    buffer.rank(r).rank().context().makeCurrent();
                    check(JCudaDriver.cuGraphLaunch(exec[r], buffer.rank(r).stream().handle()), "cuGraphLaunch", r);
                }
                for (int r : check.locals()) {
                    buffer.rank(r).stream().synchronize();
                }
                buffer.checkErrors();
                hash = 0xcbf29ce484222325L;
                for (int r = 0; r < n; r++) {
                    want[r] = MoeReference.dispatch(s, in, r);
                    if (check.local(r)) {
                        hash = MoeReferenceCheck.fnv(hash, check.checkDispatch(r, got[r], want[r]));
                    }
                }
            }
            short[][] yRows = new short[n][];
            DeviceTensor[] out = new DeviceTensor[n];
            for (int r = 0; r < n; r++) {
                yRows[r] = MoeRouting.bf16Rows(want[r].count(), c.hidden(), rnd);
                if (check.local(r)) {
                    check.writeY(r, MoeReferenceCheck.shorts(yRows[r]));
                }
            }
            buffer.world().barrier();
            for (int r : check.locals()) {
                out[r] = buffer.rank(r).combine(check.y(r, want[r].count()), got[r]);
                buffer.rank(r).computeStreamWaitForLastCall();
            }
            for (int r : check.locals()) {
                buffer.rank(r).stream().synchronize();
            }
            buffer.checkErrors();
            for (int r : check.locals()) {
                check.checkCombine(r, out[r], want, yRows, tokens[r]);
            }
            return hash;
        } finally {
            for (CUgraphExec e : exec) {
                if (e != null) {
                    JCudaDriver.cuGraphExecDestroy(e);
                }
            }
        }
    }

    /**
     * The calls {@code calls} queues on {@code m}, captured from its stream into an instantiated graph. With a
     * communication stream the calls fork it into the capture, and the capture joins it back before it ends.
     */
    private static CUgraphExec capture(MoeRank m, Runnable calls) {
        int r = m.rank().rank();
        m.rank().context().makeCurrent();
        CUstream stream = m.stream().handle();
        check(JCudaDriver.cuStreamBeginCapture(stream, CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                "cuStreamBeginCapture", r);
        calls.run();
        m.computeStreamWaitForLastCall();
        CUgraph graph = new CUgraph();
        check(JCudaDriver.cuStreamEndCapture(stream, graph), "cuStreamEndCapture", r);
        CUgraphExec exec = new CUgraphExec();
        check(JCudaDriver.cuGraphInstantiate(exec, graph, 0), "cuGraphInstantiate", r);
        JCudaDriver.cuGraphDestroy(graph);
        return exec;
    }

    private static void check(int result, String call, int rank) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new IllegalStateException(call + " on rank " + rank + " failed: " + CUresult.stringFor(result));
        }
    }
}

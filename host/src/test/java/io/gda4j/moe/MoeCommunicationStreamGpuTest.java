package io.gda4j.moe;

import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.moe.check.MoeReference;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ht.HighThroughputPart;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.world.LocalWorld;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Dispatch and combine on each rank's communication stream ({@link MoeConfig#communicationStream()}), 2 ranks sharing
 * GPU 0 over p2p, against {@link MoeReference} bit for bit. The inputs are produced on the rank's (compute) stream
 * behind a gate, a stream wait on a mapped host word the test opens later, so a call that did not wait for the
 * compute stream would read stale zeros; the outputs are copied out on the compute stream after
 * {@link MoeRank#computeStreamWaitForLastCall()}, queued while the gate is still shut, so a missing join would copy
 * zeros too.
 */
@Tag("gpu")
@Timeout(300)
class MoeCommunicationStreamGpuTest {
    private static final int[] TOKENS = {64, 23};

    private static MoeConfig config(ElementType dtype) {
        return MoeGpuTest.config(2048, dtype, 4, 64).toBuilder().communicationStream(true).build();
    }

    @Test
    void callsWaitForTheComputeStreamAndItsWaitOrdersTheOutputs() throws InterruptedException {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(20));
             MoeBuffer moe = MoeBuffer.create(w, config(ElementType.BF16));
             Inputs io = new Inputs(moe)) {
            HighThroughputSizing s = moe.sizing();
            HighThroughputPart c = s.config();
            int n = s.worldSize();
            Random rnd = new Random(5);
            MoeReference.Input[] in = new MoeReference.Input[n];
            MoeHandle[] handles = new MoeHandle[n];
            for (int r = 0; r < n; r++) {
                MoeRank m = moe.rank(r);
                assertNotSame(m.stream(), m.callStream(), "the calls have a stream of their own");
                assertTrue(m.callStream().label().contains("MoE communication stream"), m.callStream().label());
                int[] idx = MoeRouting.topk(MoeRouting.Kind.SKEWED, TOKENS[r], c.topK(), c.numExperts(), n, rnd);
                in[r] = MoeRouting.input(s, r, TOKENS[r], idx, rnd);
                byte[] tk = MoeReferenceCheck.longs(idx);
                io.topk[r].copyFromHost(0, tk, 0, tk.length);
                handles[r] = m.layout(DeviceTensor.of(io.topk[r], ElementType.INT64, TOKENS[r], c.topK()));
                io.xStaged[r].copyFromHost(0, in[r].x(), 0, in[r].x().length);
                byte[] wt = MoeReferenceCheck.floats(in[r].topkWeights());
                io.weightsStaged[r].copyFromHost(0, wt, 0, wt.length);
            }
            long recvXBytes = (long) s.maxRecvTokens() * s.payloadBytes();
            long recvWeightsBytes = 4L * s.maxRecvTokens() * c.topK();
            MoeDispatchResult[] got = new MoeDispatchResult[n];
            try {
                for (int r = 0; r < n; r++) {
                    MoeRank m = moe.rank(r);
                    CudaStream compute = m.stream();
                    compute.waitValue64AtLeast(io.gate.devicePointer(), 1);
                    compute.copyAsync(io.x[r].pointer(), io.xStaged[r].pointer(), in[r].x().length);
                    compute.copyAsync(io.weights[r].pointer(), io.weightsStaged[r].pointer(), 4L * in[r].topkWeights().length);
                    got[r] = m.dispatch(DeviceTensor.of(io.x[r], c.dtype(), TOKENS[r], c.hidden()), null,
                            DeviceTensor.of(io.topk[r], ElementType.INT64, TOKENS[r], c.topK()),
                            DeviceTensor.of(io.weights[r], ElementType.FP32, TOKENS[r], c.topK()), handles[r]);
                    m.computeStreamWaitForLastCall();
                    compute.copyAsync(io.out[r].pointer(), got[r].recvX().pointer(), recvXBytes);
                    compute.copyAsync(io.out[r].pointer().plusBytes(recvXBytes), got[r].recvTopkWeights().pointer(),
                            recvWeightsBytes);
                }
                Thread.sleep(100);
                for (int r = 0; r < n; r++) {
                    assertFalse(moe.rank(r).lastEvent().isComplete(), "rank " + r + "'s dispatch ran before the work"
                            + " queued ahead of it on the rank's stream");
                }
            } finally {
                io.gate.putLongRelease(0, 1); // a shut gate would hold the ranks' streams forever
            }
            MoeReference.Received[] want = new MoeReference.Received[n];
            for (int r = 0; r < n; r++) {
                moe.rank(r).stream().synchronize();
            }
            moe.checkErrors();
            for (int r = 0; r < n; r++) {
                want[r] = MoeReference.dispatch(s, in, r);
                int count = got[r].numRecvTokens();
                assertEquals(want[r].count(), count, "rank " + r + " received count");
                byte[] rows = new byte[count * s.payloadBytes()];
                io.out[r].copyToHost(0, rows, 0, rows.length);
                assertArrayEquals(want[r].x(), rows, "rank " + r + " received rows, read on the compute stream");
                byte[] weights = new byte[4 * count * c.topK()];
                io.out[r].copyToHost(recvXBytes, weights, 0, weights.length);
                assertArrayEquals(MoeReferenceCheck.floats(want[r].topkWeights()), weights, "rank " + r + " received weights");
            }

            short[][] yRows = new short[n][];
            for (int r = 0; r < n; r++) {
                yRows[r] = MoeRouting.bf16Rows(want[r].count(), c.hidden(), rnd);
                byte[] yb = MoeReferenceCheck.shorts(yRows[r]);
                io.yStaged[r].copyFromHost(0, yb, 0, yb.length);
            }
            DeviceTensor[] combined = new DeviceTensor[n];
            try {
                for (int r = 0; r < n; r++) {
                    MoeRank m = moe.rank(r);
                    CudaStream compute = m.stream();
                    compute.waitValue64AtLeast(io.gate.devicePointer(), 2);
                    compute.copyAsync(io.y[r].pointer(), io.yStaged[r].pointer(), 2L * yRows[r].length);
                    combined[r] = m.combine(DeviceTensor.of(io.y[r], ElementType.BF16, want[r].count(), c.hidden()), got[r]);
                    m.computeStreamWaitForLastCall();
                    compute.copyAsync(io.out[r].pointer(), combined[r].pointer(), 2L * TOKENS[r] * c.hidden());
                }
                Thread.sleep(100);
                for (int r = 0; r < n; r++) {
                    assertFalse(moe.rank(r).lastEvent().isComplete(), "rank " + r + "'s combine ran before the work"
                            + " queued ahead of it on the rank's stream");
                }
            } finally {
                io.gate.putLongRelease(0, 2);
            }
            for (int r = 0; r < n; r++) {
                moe.rank(r).stream().synchronize();
            }
            moe.checkErrors();
            for (int r = 0; r < n; r++) {
                byte[] sums = new byte[2 * TOKENS[r] * c.hidden()];
                io.out[r].copyToHost(0, sums, 0, sums.length);
                assertArrayEquals(MoeReferenceCheck.shorts(MoeReference.combine(c.hidden(), want, yRows, r, TOKENS[r])), sums,
                        "rank " + r + " combined rows, read on the compute stream");
            }
        }
    }

    /**
     * A dispatch + combine pair captured from each rank's stream with the calls on the communication stream (forked
     * into the capture by the calls, joined back by computeStreamWaitForLastCall), replayed with new data and checked
     * each time; the eager calls work after it, and closing the buffer destroys the streams. (That the timings work
     * after it too is the samples' MoeTimingRigGpuTest: the timing rig lives there.)
     */
    @Test
    @Timeout(600)
    void aCapturedPairOnTheCommunicationStreamReplaysWithNewData() {
        List<CudaStream> callStreams = new ArrayList<>();
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(20))) {
            try (MoeBuffer moe = MoeBuffer.create(w, config(ElementType.FP8_E4M3));
                 MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
                for (int r = 0; r < 2; r++) {
                    callStreams.add(moe.rank(r).callStream());
                }
                MoeGraphReplay.runCaptured(check, MoeRouting.Kind.SKEWED, 11, TOKENS, 5);
                check.run(MoeRouting.Kind.UNIFORM, 12, new int[] {40, 64});
            }
            for (CudaStream cs : callStreams) {
                assertTrue(cs.isClosed(), cs + " is closed with the buffer");
            }
        }
    }

    /** Per rank: the inputs the calls read, their staged copies, the outputs copied out on the compute stream. */
    private static final class Inputs implements AutoCloseable {
        final DeviceMemory[] topk;
        final DeviceMemory[] x;
        final DeviceMemory[] xStaged;
        final DeviceMemory[] weights;
        final DeviceMemory[] weightsStaged;
        final DeviceMemory[] y;
        final DeviceMemory[] yStaged;
        final DeviceMemory[] out;
        /** A word the ranks' streams wait on; the host raises it (portable pinned memory: one for every context). */
        final MappedHostMemory gate;
        private final List<DeviceMemory> owned = new ArrayList<>();

        Inputs(MoeBuffer moe) {
            HighThroughputSizing s = moe.sizing();
            HighThroughputPart c = s.config();
            int n = s.worldSize();
            topk = new DeviceMemory[n];
            x = new DeviceMemory[n];
            xStaged = new DeviceMemory[n];
            weights = new DeviceMemory[n];
            weightsStaged = new DeviceMemory[n];
            y = new DeviceMemory[n];
            yStaged = new DeviceMemory[n];
            out = new DeviceMemory[n];
            long t = c.maxTokensPerRank();
            long yBytes = (long) s.maxRecvTokens() * s.combineRowBytes();
            long outBytes = (long) s.maxRecvTokens() * (s.payloadBytes() + 4L * c.topK());
            for (int r = 0; r < n; r++) {
                var ctx = moe.rank(r).rank().context();
                topk[r] = own(ctx.allocate(t * 8L * c.topK()));
                x[r] = own(ctx.allocate(t * s.payloadBytes()));
                xStaged[r] = own(ctx.allocate(t * s.payloadBytes()));
                weights[r] = own(ctx.allocate(t * 4L * c.topK()));
                weightsStaged[r] = own(ctx.allocate(t * 4L * c.topK()));
                y[r] = own(ctx.allocate(yBytes));
                yStaged[r] = own(ctx.allocate(yBytes));
                out[r] = own(ctx.allocate(Math.max(outBytes, 2L * t * c.hidden())));
                for (DeviceMemory m : new DeviceMemory[] {x[r], weights[r], y[r], out[r]}) {
                    m.fill((byte) 0); // what a call that ran too early would read, or a copy that ran too early return
                }
            }
            gate = moe.rank(0).rank().context().allocateMappedHost(4096);
        }

        private DeviceMemory own(DeviceMemory m) {
            owned.add(m);
            return m;
        }

        @Override
        public void close() {
            gate.close();
            for (int i = owned.size() - 1; i >= 0; i--) {
                owned.get(i).close();
            }
        }
    }
}

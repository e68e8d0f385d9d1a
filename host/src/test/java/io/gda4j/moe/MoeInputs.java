package io.gda4j.moe;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.moe.check.MoeReference;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ht.HighThroughputPart;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;

/**
 * Device inputs of every rank of a {@link MoeBuffer} for tests that drive the calls themselves: x, top-k, weights and
 * expert outputs y at their largest, plus a second top-k for routings a layout must refuse (so a refused routing never
 * overwrites the one a valid handle describes). Allocated here, before any kernel runs; uploads are synchronous
 * copies, so make them while no kernel of these ranks runs.
 */
final class MoeInputs implements AutoCloseable {
    private final HighThroughputSizing s;
    private final DeviceMemory[] x;
    private final DeviceMemory[] topk;
    private final DeviceMemory[] badTopk;
    private final DeviceMemory[] weights;
    private final DeviceMemory[] y;

    MoeInputs(MoeBuffer moe) {
        this(moe.world(), moe.sizing());
    }

    /** Inputs for buffers of sizing {@code s} in {@code world}, allocated before any buffer is made. */
    MoeInputs(World world, HighThroughputSizing s) {
        this.s = s;
        int n = s.worldSize();
        HighThroughputPart c = s.config();
        long t = c.maxTokensPerRank();
        x = new DeviceMemory[n];
        topk = new DeviceMemory[n];
        badTopk = new DeviceMemory[n];
        weights = new DeviceMemory[n];
        y = new DeviceMemory[n];
        try {
            for (Rank r : world.localRanks()) {
                int i = r.rank();
                x[i] = r.context().allocate(Math.max(16, t * s.payloadBytes()));
                topk[i] = r.context().allocate(Math.max(16, t * 8L * c.topK()));
                badTopk[i] = r.context().allocate(Math.max(16, t * 8L * c.topK()));
                weights[i] = r.context().allocate(Math.max(16, t * 4L * c.topK()));
                y[i] = r.context().allocate((long) s.maxRecvTokens() * s.combineRowBytes());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Uploads a routing of {@code kind} with {@code tokens} tokens to rank r's x, top-k and weights; returns it. */
    MoeReference.Input upload(int r, MoeRouting.Kind kind, int tokens, Random rnd) {
        HighThroughputPart c = s.config();
        int[] idx = MoeRouting.topk(kind, tokens, c.topK(), c.numExperts(), s.worldSize(), rnd);
        MoeReference.Input in = MoeRouting.input(s, r, tokens, idx, rnd);
        copy(x[r], in.x());
        copy(topk[r], MoeReferenceCheck.longs(idx));
        copy(weights[r], MoeReferenceCheck.floats(in.topkWeights()));
        return in;
    }

    /**
     * Uploads to rank r's second top-k a routing of {@code tokens} tokens whose entry {@code (token, slot)} names
     * {@code expert} (out of range, for a layout to refuse); returns the rejected value's place as the message names it.
     */
    String uploadBad(int r, int tokens, int token, int slot, long expert, Random rnd) {
        HighThroughputPart c = s.config();
        int[] idx = MoeRouting.topk(MoeRouting.Kind.UNIFORM, tokens, c.topK(), c.numExperts(), s.worldSize(), rnd);
        byte[] b = MoeReferenceCheck.longs(idx);
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(8 * (token * c.topK() + slot), expert);
        copy(badTopk[r], b);
        return "topkIdx[" + token + "][" + slot + "] = " + expert;
    }

    /** Uploads rank r's expert outputs, the first {@code rows.length / hidden} rows of y. */
    void uploadY(int r, short[] rows) {
        copy(y[r], MoeReferenceCheck.shorts(rows));
    }

    DeviceTensor x(int r, int tokens) {
        return DeviceTensor.of(x[r], s.config().dtype(), tokens, s.config().hidden());
    }

    DeviceTensor topk(int r, int tokens) {
        return DeviceTensor.of(topk[r], ElementType.INT64, tokens, s.config().topK());
    }

    DeviceTensor badTopk(int r, int tokens) {
        return DeviceTensor.of(badTopk[r], ElementType.INT64, tokens, s.config().topK());
    }

    DeviceTensor weights(int r, int tokens) {
        return DeviceTensor.of(weights[r], ElementType.FP32, tokens, s.config().topK());
    }

    /** Rank r's expert outputs, {@code maxRecvTokens} rows (as a captured combine takes them). */
    DeviceTensor y(int r) {
        return DeviceTensor.of(y[r], ElementType.BF16, s.maxRecvTokens(), s.config().hidden());
    }

    /**
     * Dispatch on every rank r of {@code in[r]} (uploaded) with {@code handles[r]}, all queued before any host wait;
     * then waits and checks every rank's received count, rows and top-k against {@link MoeReference}, bit for bit.
     */
    MoeDispatchResult[] dispatch(MoeBuffer moe, MoeHandle[] handles, MoeReference.Input[] in) {
        int n = s.worldSize();
        MoeDispatchResult[] d = new MoeDispatchResult[n];
        for (int r = 0; r < n; r++) {
            int t = in[r].numTokens();
            d[r] = moe.rank(r).dispatch(x(r, t), null, topk(r, t), weights(r, t), handles[r]);
        }
        for (int r = 0; r < n; r++) {
            moe.rank(r).stream().synchronize();
        }
        moe.checkErrors();
        for (int r = 0; r < n; r++) {
            MoeReference.Received want = MoeReference.dispatch(s, in, r);
            int count = d[r].numRecvTokens();
            expect(count == want.count(), "rank " + r + " received " + count + " rows, the reference " + want.count());
            expect(Arrays.equals(want.x(), read(moe.rank(r), d[r].recvX(), (long) count * s.payloadBytes())),
                    "rank " + r + "'s received rows differ from the reference");
            expect(Arrays.equals(MoeReferenceCheck.ints(want.topkIdx()),
                    read(moe.rank(r), d[r].recvTopkIdx(), 4L * count * s.config().topK())),
                    "rank " + r + "'s received top-k differs from the reference");
        }
        return d;
    }

    /**
     * Combine on every rank r of {@code d[r]} (which dispatched {@code in}) with new expert outputs, all queued before
     * any host wait; then checks every rank's sums against {@link MoeReference}, bit for bit.
     */
    void combine(MoeBuffer moe, MoeDispatchResult[] d, MoeReference.Input[] in, Random rnd) {
        int n = s.worldSize();
        int hidden = s.config().hidden();
        MoeReference.Received[] want = new MoeReference.Received[n];
        short[][] rows = new short[n][];
        for (int r = 0; r < n; r++) {
            want[r] = MoeReference.dispatch(s, in, r);
            rows[r] = MoeRouting.bf16Rows(want[r].count(), hidden, rnd);
            uploadY(r, rows[r]);
        }
        DeviceTensor[] out = new DeviceTensor[n];
        for (int r = 0; r < n; r++) {
            out[r] = moe.rank(r).combine(y(r), d[r]);
        }
        for (int r = 0; r < n; r++) {
            moe.rank(r).stream().synchronize();
        }
        moe.checkErrors();
        for (int r = 0; r < n; r++) {
            short[] sums = MoeReference.combine(hidden, want, rows, r, in[r].numTokens());
            expect(Arrays.equals(MoeReferenceCheck.shorts(sums),
                    read(moe.rank(r), out[r], 2L * in[r].numTokens() * hidden)),
                    "rank " + r + "'s combined rows differ from the reference");
        }
    }

    private static byte[] read(MoeRank m, DeviceTensor t, long bytes) {
        byte[] b = new byte[Math.toIntExact(bytes)];
        m.copyToHost(t.pointer(), b);
        return b;
    }

    private static void expect(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    private static void copy(DeviceMemory m, byte[] b) {
        if (b.length > 0) {
            m.copyFromHost(0, b, 0, b.length);
        }
    }

    @Override
    public void close() {
        for (DeviceMemory[] group : new DeviceMemory[][] {x, topk, badTopk, weights, y}) {
            for (DeviceMemory m : group) {
                if (m != null) {
                    m.close();
                }
            }
        }
    }
}

package io.gda4j.moe.check;

import io.gda4j.moe.ht.HighThroughputPart;
import io.gda4j.moe.ht.MoeChannels;
import io.gda4j.moe.ht.HighThroughputRank;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.tensor.Bf16;

import java.util.Arrays;

/**
 * The CPU reference of layout, dispatch and combine: what the kernels must produce, bit for bit. Slow and plain on
 * purpose; the GPU tests and {@code gda4j moe --check} compare against it.
 *
 * <ul>
 *   <li>Experts are split evenly: rank r holds experts [r L, (r + 1) L), L = numExperts / worldSize; -1 = none.</li>
 *   <li>Layout: a token is in rank r when one of its top-k experts is; its slot in (channel, r) is the number of
 *       earlier tokens of its channel in r. Tokens per expert count (token, top-k slot) pairs.</li>
 *   <li>Dispatch: receiver r gets each token once, ordered by (source rank, token); top-k entries of other ranks'
 *       experts become -1 with weight 0, the others become local expert indices; local expert counts count
 *       (row, slot) pairs.</li>
 *   <li>Combine: source s gets, for each token, the sum over ranks r in increasing order of the row r returned, in
 *       FP32 starting from +0.0, rounded once to BF16 (nearest even); a token routed nowhere gets +0.0.</li>
 * </ul>
 */
public final class MoeReference {
    private MoeReference() {
    }

    /** One rank's dispatch input: {@code numTokens} rows of the payload, FP8 scales (or null), top-k and weights. */
    public record Input(int numTokens, byte[] x, float[] scales, int[] topkIdx, float[] topkWeights) {
    }

    /** What the layout says about one rank's tokens. */
    public record Layout(int numTokens, int worldSize, int numChannels, int[] tokensPerRank, int[] tokensPerExpert,
                         int[] tokenSlot, int[] channelCount) {
        /** Slot of {@code token} in its channel's stream to {@code rank}, or -1 when it does not go there. */
        public int slot(int token, int rank) {
            return tokenSlot[token * worldSize + rank];
        }

        public boolean inRank(int token, int rank) {
            return slot(token, rank) >= 0;
        }

        public int channelCount(int channel, int rank) {
            return channelCount[channel * worldSize + rank];
        }
    }

    /** What a rank receives from a dispatch, in (source rank, token) order. */
    public record Received(int count, byte[] x, float[] scales, int[] topkIdx, float[] topkWeights, int[] srcRank,
                           int[] srcToken, int[] localExpertCounts) {
    }

    /**
     * The layout of one rank's top-k ({@code numTokens x topK}, row-major).
     *
     * @throws IllegalArgumentException for an index outside [-1, numExperts), naming the token and slot
     */
    public static Layout layout(int[] topkIdx, int numTokens, int topK, int numExperts, int worldSize, int numChannels) {
        if (topkIdx.length < (long) numTokens * topK) {
            throw new IllegalArgumentException("top-k holds " + topkIdx.length + " entries, " + numTokens + " x " + topK + " needed");
        }
        int local = numExperts / worldSize;
        int[] perRank = new int[worldSize];
        int[] perExpert = new int[numExperts];
        int[] slot = new int[numTokens * worldSize];
        int[] channelCount = new int[numChannels * worldSize];
        Arrays.fill(slot, -1);
        for (int t = 0; t < numTokens; t++) {
            int c = MoeChannels.of(numTokens, numChannels, t);
            boolean[] in = new boolean[worldSize];
            for (int k = 0; k < topK; k++) {
                int e = topkIdx[t * topK + k];
                if (e == -1) {
                    continue;
                }
                if (e < -1 || e >= numExperts) {
                    throw HighThroughputRank.badExpert(t, k, e, numExperts);
                }
                perExpert[e]++;
                in[e / local] = true;
            }
            for (int r = 0; r < worldSize; r++) {
                if (in[r]) {
                    slot[t * worldSize + r] = channelCount[c * worldSize + r]++;
                    perRank[r]++;
                }
            }
        }
        return new Layout(numTokens, worldSize, numChannels, perRank, perExpert, slot, channelCount);
    }

    /** Dispatch of every rank's input ({@code inputs[s]} for source s) as seen by receiver {@code rank}. */
    public static Received dispatch(HighThroughputSizing sizing, Input[] inputs, int rank) {
        HighThroughputPart c = sizing.config();
        int n = sizing.worldSize();
        int k = c.topK();
        int local = sizing.numLocalExperts();
        int payload = sizing.payloadBytes();
        int spr = sizing.scalesPerRow();
        int count = 0;
        for (Input in : inputs) {
            for (int t = 0; t < in.numTokens(); t++) {
                if (holds(in.topkIdx(), t, k, rank, local)) {
                    count++;
                }
            }
        }
        byte[] x = new byte[count * payload];
        float[] scales = new float[count * spr];
        int[] idx = new int[count * k];
        float[] w = new float[count * k];
        int[] srcRank = new int[count];
        int[] srcToken = new int[count];
        int[] expertCounts = new int[local];
        int row = 0;
        for (int s = 0; s < n; s++) {
            Input in = inputs[s];
            for (int t = 0; t < in.numTokens(); t++) {
                if (!holds(in.topkIdx(), t, k, rank, local)) {
                    continue;
                }
                System.arraycopy(in.x(), t * payload, x, row * payload, payload);
                if (spr > 0) {
                    System.arraycopy(in.scales(), t * spr, scales, row * spr, spr);
                }
                for (int j = 0; j < k; j++) {
                    int e = in.topkIdx()[t * k + j];
                    boolean mine = e >= 0 && e / local == rank;
                    idx[row * k + j] = mine ? e - rank * local : -1;
                    w[row * k + j] = mine ? in.topkWeights()[t * k + j] : 0f;
                    if (mine) {
                        expertCounts[e - rank * local]++;
                    }
                }
                srcRank[row] = s;
                srcToken[row] = t;
                row++;
            }
        }
        return new Received(count, x, scales, idx, w, srcRank, srcToken, expertCounts);
    }

    private static boolean holds(int[] topk, int t, int k, int rank, int local) {
        for (int j = 0; j < k; j++) {
            int e = topk[t * k + j];
            if (e >= 0 && e / local == rank) {
                return true;
            }
        }
        return false;
    }

    /**
     * Combine at source {@code rank}: {@code y[r]} holds rank r's rows (BF16, {@code hidden} each) in the order r
     * received them ({@code received[r]}). Returns {@code numTokens x hidden} BF16.
     */
    public static short[] combine(int hidden, Received[] received, short[][] y, int rank, int numTokens) {
        int n = received.length;
        int[][] rowOf = new int[n][numTokens];
        for (int r = 0; r < n; r++) {
            Arrays.fill(rowOf[r], -1);
            for (int i = 0; i < received[r].count(); i++) {
                if (received[r].srcRank()[i] == rank) {
                    rowOf[r][received[r].srcToken()[i]] = i;
                }
            }
        }
        short[] out = new short[numTokens * hidden];
        float[] acc = new float[hidden];
        for (int t = 0; t < numTokens; t++) {
            Arrays.fill(acc, 0f);
            for (int r = 0; r < n; r++) {
                int i = rowOf[r][t];
                if (i < 0) {
                    continue;
                }
                for (int h = 0; h < hidden; h++) {
                    acc[h] += Bf16.toFloat(y[r][i * hidden + h]);
                }
            }
            for (int h = 0; h < hidden; h++) {
                out[t * hidden + h] = Bf16.fromFloat(acc[h]);
            }
        }
        return out;
    }
}

package io.gda4j.moe.check;

import io.gda4j.moe.ht.HighThroughputRank;
import io.gda4j.moe.ll.LowLatencyPart;
import io.gda4j.moe.ll.LowLatencyRank;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.moe.tensor.Bf16;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.moe.tensor.Fp8BlockQuantizer;

import java.util.Arrays;

/**
 * The CPU reference of the low-latency dispatch and combine: what the kernels ({@code kernels/moe_ll.cu}) must
 * produce, bit for bit. Slow and plain on purpose.
 *
 * <ul>
 *   <li><b>Experts</b> are split evenly: rank r holds experts [r L, (r + 1) L), L = numExperts / worldSize; a top-k
 *       entry of -1 means none.</li>
 *   <li><b>Rows</b>: a token goes once to each distinct expert of its top-k (not once per rank: two experts of one
 *       rank get two rows). A repeat of an expert within a token's top-k adds no row: it names the row of the first
 *       slot with that expert.</li>
 *   <li><b>Place</b>: at the expert's rank, local expert e owns S = worldSize x maxTokensPerRank slots; source s owns
 *       slots [s T, (s + 1) T) and fills them from the start in its token order (the n-th of its tokens naming e goes
 *       to slot s T + n). A function of the routing alone, never of timing. Each row carries its source record
 *       (source rank, source token, top-k slot of its first occurrence, send row): the send row numbers a source's
 *       rows by expert, then slot ({@link Route#sendRow()}).</li>
 *   <li><b>Payload</b>: BF16 as given, or FP8 e4m3 cast once per token by {@link Fp8BlockQuantizer} (every expert
 *       gets the same bytes and scales).</li>
 *   <li><b>Combine</b>: y has the dispatch's layout ({@code [L][S][hidden]} BF16 at each rank). Source s computes for
 *       each token t, in FP32 starting from +0.0, for k = 0, 1, ..., topK - 1 in increasing order, skipping -1:
 *       {@code acc = fma(w[t][k], float(y_row(t, k)[h]), acc)} (one rounding per step: {@link Math#fma}, on the
 *       device {@code __fmaf_rn}), then rounds once to BF16 (nearest even). A repeated expert contributes its weight
 *       times the same row again. A token routed nowhere gets +0.0.</li>
 * </ul>
 */
public final class MoeLowLatencyReference {
    private MoeLowLatencyReference() {
    }

    /**
     * Where one rank's (token, k) entries go: {@code slot[t K + k]} is the entry's place in its expert's range for this
     * source (0-based, before adding {@code source x maxTokensPerRank}), or -1 for -1 entries and repeats;
     * {@code firstK[t K + k]} is the top-k slot whose row the entry names (k itself unless a repeat; -1 for none);
     * {@code sendCount[e]} rows go to expert e; {@code sendRow[t K + k]} is the entry's row in the source's send order
     * (the rows to experts below e, plus its slot; -1 where the slot is), which the combine returns it to.
     */
    public record Route(int numTokens, int topK, int[] slot, int[] firstK, int[] sendCount, int[] sendRow) {
    }

    /** One rank's dispatch input: {@code numTokens x hidden} BF16 rows and {@code numTokens x topK} expert indices. */
    public record Input(int numTokens, short[] x, int[] topkIdx) {
    }

    /**
     * What a rank holds after a dispatch, in the expert-major layout ({@code [L][S]} rows): payload bytes
     * ({@code [L][S][payloadBytes]}), scales ({@code [L][S][hidden/128]}, FP8 only), source records
     * ({@code [L][S][4]}), rows per (local expert, source) ({@code [L][N]}) and per local expert ({@code [L]}).
     * Slots past a source's count are zero here; on the GPU they hold whatever was there: compare valid slots only.
     */
    public record Received(int numLocalExperts, int slotsPerExpert, int maxTokensPerRank, byte[] x, float[] scales,
                           int[] src, int[] countPerSource, int[] count) {
        /** Whether slot {@code slot} of local expert {@code e} holds a row of this dispatch. */
        public boolean valid(int e, int slot) {
            int worldSize = countPerSource.length / numLocalExperts;
            int source = slot / maxTokensPerRank;
            return slot % maxTokensPerRank < countPerSource[e * worldSize + source];
        }
    }

    /**
     * The route of one rank's top-k ({@code numTokens x topK}, row-major). The checks the GPU call makes on the host
     * (token count) and on the device (indices) are made here too.
     *
     * @throws IllegalArgumentException for more tokens than {@code maxTokensPerRank}, or an index outside
     *                                  [-1, numExperts) (naming the token and slot)
     */
    public static Route route(int[] topkIdx, int numTokens, int topK, int numExperts, int maxTokensPerRank) {
        LowLatencyRank.checkTokens(numTokens, maxTokensPerRank);
        if (topkIdx.length < (long) numTokens * topK) {
            throw new IllegalArgumentException("top-k holds " + topkIdx.length + " entries, " + numTokens + " x " + topK
                    + " needed");
        }
        int[] slot = new int[numTokens * topK];
        int[] firstK = new int[numTokens * topK];
        int[] count = new int[numExperts];
        for (int t = 0; t < numTokens; t++) {
            for (int k = 0; k < topK; k++) {
                int e = topkIdx[t * topK + k];
                slot[t * topK + k] = -1;
                firstK[t * topK + k] = -1;
                if (e == -1) {
                    continue;
                }
                if (e < -1 || e >= numExperts) {
                    throw HighThroughputRank.badExpert(t, k, e, numExperts);
                }
                int first = k;
                for (int j = 0; j < k; j++) {
                    if (topkIdx[t * topK + j] == e) {
                        first = j;
                        break;
                    }
                }
                firstK[t * topK + k] = first;
                if (first == k) {
                    slot[t * topK + k] = count[e]++;
                }
            }
        }
        int[] base = new int[numExperts];
        for (int e = 1; e < numExperts; e++) {
            base[e] = base[e - 1] + count[e - 1];
        }
        int[] sendRow = new int[numTokens * topK];
        for (int i = 0; i < sendRow.length; i++) {
            sendRow[i] = slot[i] < 0 ? -1 : base[topkIdx[i]] + slot[i];
        }
        return new Route(numTokens, topK, slot, firstK, count, sendRow);
    }

    /** The payload one source sends for each of its tokens: {@code numTokens x payloadBytes}, and FP8 scales. */
    public record Cast(byte[] x, float[] scales) {
    }

    /** The cast of a rank's rows: BF16 bytes as they are (little-endian), or FP8 with scales. */
    public static Cast cast(LowLatencyPart c, short[] x, int numTokens) {
        int hidden = c.hidden();
        if (c.dispatchType() == ElementType.BF16) {
            byte[] b = new byte[numTokens * hidden * 2];
            for (int i = 0; i < numTokens * hidden; i++) {
                b[2 * i] = (byte) x[i];
                b[2 * i + 1] = (byte) (x[i] >>> 8);
            }
            return new Cast(b, new float[0]);
        }
        int groups = hidden / Fp8BlockQuantizer.BLOCK;
        byte[] q = new byte[numTokens * hidden];
        float[] scales = new float[numTokens * groups];
        for (int t = 0; t < numTokens; t++) {
            Fp8BlockQuantizer.quantizeRow(x, t * hidden, hidden, c.powerOfTwoScales(), q, t * hidden, scales, t * groups);
        }
        return new Cast(q, scales);
    }

    /** Dispatch of every rank's input ({@code inputs[s]} for source s) as held by rank {@code rank}. */
    public static Received dispatch(LowLatencySizing s, Input[] inputs, int rank) {
        LowLatencyPart c = s.config();
        int n = s.worldSize();
        int local = s.numLocalExperts();
        int slots = s.slotsPerExpert();
        int payload = s.payloadBytes();
        int groups = s.scalesPerRow();
        int maxT = c.maxTokensPerRank();
        int k = c.topK();
        byte[] x = new byte[local * slots * payload];
        float[] scales = new float[local * slots * groups];
        int[] src = new int[local * slots * LowLatencySizing.SRC_INTS];
        int[] perSource = new int[local * n];
        int[] count = new int[local];
        for (int source = 0; source < n; source++) {
            Input in = inputs[source];
            Route route = route(in.topkIdx(), in.numTokens(), k, c.numExperts(), maxT);
            Cast cast = cast(c, in.x(), in.numTokens());
            for (int t = 0; t < in.numTokens(); t++) {
                for (int j = 0; j < k; j++) {
                    int e = in.topkIdx()[t * k + j];
                    int slot = route.slot()[t * k + j];
                    if (slot < 0 || e / local != rank) {
                        continue;
                    }
                    int le = e - rank * local;
                    int row = le * slots + source * maxT + slot;
                    System.arraycopy(cast.x(), t * payload, x, row * payload, payload);
                    System.arraycopy(cast.scales(), t * groups, scales, row * groups, groups);
                    int at = row * LowLatencySizing.SRC_INTS;
                    src[at] = source;
                    src[at + 1] = t;
                    src[at + 2] = j;
                    src[at + 3] = route.sendRow()[t * k + j];
                    perSource[le * n + source]++;
                    count[le]++;
                }
            }
        }
        return new Received(local, slots, maxT, x, scales, src, perSource, count);
    }

    /**
     * Combine at source {@code rank} of its {@code numTokens} tokens ({@code topkIdx}, {@code topkWeights}: its
     * {@code numTokens x topK} routing and FP32 weights): {@code y[r]} is rank r's {@code [L][S][hidden]} BF16 rows.
     * Returns {@code numTokens x hidden} BF16.
     */
    public static short[] combine(LowLatencySizing s, int rank, int[] topkIdx, float[] topkWeights, int numTokens,
                                  short[][] y) {
        LowLatencyPart c = s.config();
        int hidden = c.hidden();
        int k = c.topK();
        int local = s.numLocalExperts();
        Route route = route(topkIdx, numTokens, k, c.numExperts(), c.maxTokensPerRank());
        short[] out = new short[numTokens * hidden];
        float[] acc = new float[hidden];
        for (int t = 0; t < numTokens; t++) {
            Arrays.fill(acc, 0.0f);
            for (int j = 0; j < k; j++) {
                int e = topkIdx[t * k + j];
                if (e == -1) {
                    continue;
                }
                int first = route.firstK()[t * k + j];
                int slot = route.slot()[t * k + first];
                int row = (e % local) * s.slotsPerExpert() + rank * c.maxTokensPerRank() + slot;
                short[] rows = y[e / local];
                float w = topkWeights[t * k + j];
                for (int h = 0; h < hidden; h++) {
                    acc[h] = Math.fma(w, Bf16.toFloat(rows[row * hidden + h]), acc[h]);
                }
            }
            for (int h = 0; h < hidden; h++) {
                out[t * hidden + h] = Bf16.fromFloat(acc[h]);
            }
        }
        return out;
    }
}

package io.gda4j.samples.moe;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.ModuleImage;
import io.gda4j.moe.tensor.Bf16;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.WorldConfig;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The framework column's GPU steps (samples/kernels/moe_framework.cu) on one GPU against Java, without NCCL (which
 * needs a GPU per rank): the per-expert counts, the permutation to one row per (token, expert) sorted by expert, the
 * regrouping of received chunks by local expert and back, and the weighted sum. So the column times work that is what
 * it says, even where only a multi-GPU machine can run the column itself.
 */
@Tag("gpu")
@Timeout(120)
class MoeFrameworkKernelsGpuTest {
    private static final int THREADS = 256;

    @Test
    void countsPermuteRegroupAndWeightedSumAreTheFrameworksSteps() {
        GpuWorlds.assumeGpu();
        try (LocalWorld w = LocalWorld.create(WorldConfig.builder().gpus(List.of(0)).heapSizeBytes(16L << 20)
                .transport("p2p").build())) {
            Rank r = w.rank(0);
            ModuleImage image = ModuleImage.classPathResource(MoeFrameworkNcclBaseline.RESOURCE,
                    MoeFrameworkNcclBaseline.class.getClassLoader());
            w.loadModules(image);
            Random rnd = new Random(5);
            int tokens = 150, topK = 4, experts = 16, hidden = 256, ranks = 4;
            int pairs = tokens * topK;
            int[] topk = MoeRouting.topk(MoeRouting.Kind.WITH_NONE, tokens, topK, experts, ranks, rnd);
            long rowBytes = 2L * hidden;
            byte[] x = new byte[(int) (tokens * rowBytes)];
            rnd.nextBytes(x);
            try (DeviceMemory dTopk = r.context().allocate(8L * pairs);
                 DeviceMemory dCounts = r.context().allocate(4L * experts);
                 DeviceMemory dCursor = r.context().allocate(4L * experts);
                 DeviceMemory dMap = r.context().allocate(4L * pairs);
                 DeviceMemory dX = r.context().allocate(x.length);
                 DeviceMemory dPerm = r.context().allocate(pairs * rowBytes)) {
                ByteBuffer idx = ByteBuffer.allocate(8 * pairs).order(ByteOrder.LITTLE_ENDIAN);
                for (int e : topk) {
                    idx.putLong(e);
                }
                dTopk.copyFromHost(0, idx.array(), 0, idx.capacity());
                dX.copyFromHost(0, x, 0, x.length);
                dCounts.fill((byte) 0);
                dCursor.fill((byte) 0);
                r.kernel(image, "fw_count").launch(2, THREADS, 0, r.stream(), KernelArgs.create()
                        .pointer(dTopk.pointer()).i32(pairs).i32(experts).pointer(dCounts.pointer()));
                r.kernel(image, "fw_map").launch(3, THREADS, 4 * experts, r.stream(), KernelArgs.create()
                        .pointer(dTopk.pointer()).i32(pairs).i32(experts).pointer(dCounts.pointer())
                        .pointer(dCursor.pointer()).pointer(dMap.pointer()));
                r.kernel(image, "fw_gather").launch(5, THREADS, 0, r.stream(), KernelArgs.create()
                        .pointer(dX.pointer()).pointer(dMap.pointer()).i32(pairs).i32(topK).u64(rowBytes)
                        .pointer(dPerm.pointer()));
                r.stream().synchronize();
                int[] counts = ints(dCounts, experts);
                assertArrayEquals(MoeFrameworkNcclBaseline.countsPerExpert(topk, experts), counts, "per-expert counts");
                int[] map = ints(dMap, pairs);
                int[] first = new int[experts];
                for (int e = 1; e < experts; e++) {
                    first[e] = first[e - 1] + counts[e - 1];
                }
                boolean[] taken = new boolean[pairs];
                byte[] perm = new byte[(int) (pairs * rowBytes)];
                dPerm.copyToHost(0, perm, 0, perm.length);
                for (int i = 0; i < pairs; i++) {
                    int e = topk[i];
                    if (e < 0) {
                        assertEquals(-1, map[i], "pair " + i + " names no expert");
                        continue;
                    }
                    assertTrue(map[i] >= first[e] && map[i] < first[e] + counts[e], "pair " + i + " among expert " + e);
                    assertTrue(!taken[map[i]], "row " + map[i] + " taken twice");
                    taken[map[i]] = true;
                    for (int b = 0; b < rowBytes; b++) {
                        assertEquals(x[(int) ((i / topK) * rowBytes + b)], perm[(int) (map[i] * rowBytes + b)],
                                "pair " + i + "'s row, byte " + b);
                    }
                }
                checkRegrouping(r, image, rnd, ranks, experts, rowBytes);
                checkWeightedSum(r, image, rnd, tokens, topK, hidden, map);
            }
        }
    }

    /** Chunks [source][local expert] of random sizes to [expert][source] and back, for rank 1 of {@code ranks}. */
    private static void checkRegrouping(Rank r, ModuleImage image, Random rnd, int ranks, int experts, long rowBytes) {
        int me = 1, local = experts / ranks;
        int[] gathered = new int[ranks * experts];
        int rows = 0;
        for (int i = 0; i < gathered.length; i++) {
            gathered[i] = rnd.nextInt(4);
            if (i % experts / local == me) {
                rows += gathered[i];
            }
        }
        byte[] in = new byte[(int) (Math.max(1, rows) * rowBytes)];
        rnd.nextBytes(in);
        byte[] want = new byte[in.length];
        int at = 0;
        for (int e = 0; e < local; e++) {
            for (int s = 0; s < ranks; s++) {
                int from = 0;
                for (int s2 = 0; s2 < ranks; s2++) {
                    for (int e2 = 0; e2 < local; e2++) {
                        if (s2 < s || (s2 == s && e2 < e)) {
                            from += gathered[s2 * experts + me * local + e2];
                        }
                    }
                }
                int n = gathered[s * experts + me * local + e];
                System.arraycopy(in, (int) (from * rowBytes), want, (int) (at * rowBytes), (int) (n * rowBytes));
                at += n;
            }
        }
        ByteBuffer g = ByteBuffer.allocate(4 * gathered.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int v : gathered) {
            g.putInt(v);
        }
        try (DeviceMemory dG = r.context().allocate(g.capacity());
             DeviceMemory dIn = r.context().allocate(in.length);
             DeviceMemory dOut = r.context().allocate(in.length);
             DeviceMemory dBack = r.context().allocate(in.length)) {
            dG.copyFromHost(0, g.array(), 0, g.capacity());
            dIn.copyFromHost(0, in, 0, in.length);
            for (int dir = 1; dir >= 0; dir--) {
                r.kernel(image, "fw_sort_chunks").launch(ranks * local, THREADS, 0, r.stream(), KernelArgs.create()
                        .pointer((dir == 1 ? dIn : dOut).pointer()).pointer((dir == 1 ? dOut : dBack).pointer())
                        .pointer(dG.pointer()).i32(ranks).i32(me).i32(local).i32(experts).u64(rowBytes).i32(dir));
            }
            r.stream().synchronize();
            byte[] got = new byte[in.length];
            dOut.copyToHost(0, got, 0, got.length);
            assertArrayEquals(want, got, "chunks by local expert, then source");
            dBack.copyToHost(0, got, 0, got.length);
            assertArrayEquals(in, got, "and back by source, then expert");
        }
    }

    /** Each token's returned rows (at its pairs' places in the permuted order) summed with its weights. */
    private static void checkWeightedSum(Rank r, ModuleImage image, Random rnd, int tokens, int topK, int hidden,
                                         int[] map) {
        int pairs = tokens * topK;
        short[] rows = MoeRouting.bf16Rows(pairs, hidden, rnd);
        float[] weights = new float[pairs];
        ByteBuffer y = ByteBuffer.allocate(2 * rows.length).order(ByteOrder.LITTLE_ENDIAN);
        for (short v : rows) {
            y.putShort(v);
        }
        ByteBuffer wb = ByteBuffer.allocate(4 * pairs).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer mb = ByteBuffer.allocate(4 * pairs).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < pairs; i++) {
            weights[i] = rnd.nextFloat();
            wb.putFloat(weights[i]);
            mb.putInt(map[i]);
        }
        try (DeviceMemory dY = r.context().allocate(y.capacity());
             DeviceMemory dW = r.context().allocate(wb.capacity());
             DeviceMemory dMap = r.context().allocate(mb.capacity());
             DeviceMemory dOut = r.context().allocate(2L * tokens * hidden)) {
            dY.copyFromHost(0, y.array(), 0, y.capacity());
            dW.copyFromHost(0, wb.array(), 0, wb.capacity());
            dMap.copyFromHost(0, mb.array(), 0, mb.capacity());
            r.kernel(image, "fw_unpermute").launch(7, THREADS, 0, r.stream(), KernelArgs.create()
                    .pointer(dY.pointer()).pointer(dMap.pointer()).pointer(dW.pointer()).i32(tokens).i32(topK)
                    .i32(hidden).pointer(dOut.pointer()));
            r.stream().synchronize();
            byte[] out = new byte[2 * tokens * hidden];
            dOut.copyToHost(0, out, 0, out.length);
            ByteBuffer o = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
            for (int t = 0; t < tokens; t++) {
                for (int h = 0; h < hidden; h++) {
                    float acc = 0.0f;
                    for (int k = 0; k < topK; k++) {
                        int at = map[t * topK + k];
                        if (at >= 0) {
                            acc = Math.fma(weights[t * topK + k], Bf16.toFloat(rows[at * hidden + h]), acc);
                        }
                    }
                    assertEquals(Bf16.fromFloat(acc), o.getShort(2 * (t * hidden + h)), "token " + t + " channel " + h);
                }
            }
        }
    }

    private static int[] ints(DeviceMemory m, int n) {
        byte[] b = new byte[4 * n];
        m.copyToHost(0, b, 0, b.length);
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        int[] v = new int[n];
        for (int i = 0; i < n; i++) {
            v[i] = bb.getInt(4 * i);
        }
        return v;
    }
}

package io.gda4j.benchmarks;

import io.gda4j.mlx5.CqeDecoder;
import io.gda4j.mlx5.CqeDescriptor;
import io.gda4j.mlx5.CqeEncoder;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.mlx5.WqeDecoder;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.mlx5.WqeEncoder;
import io.gda4j.mlx5.WqeFields;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The other host hot path, no GPU: mlx5 WQE encoding and CQE decoding in Java, over direct buffers laid out like the
 * mapped rings. Nanoseconds per WQE or CQE.
 * <ul>
 *   <li>{@code encodeRdmaWrite}, {@code encodeInline8}: a host-posted WQE ({@code RingPoster}: the proxy's NIC
 *       handler on the emulated NIC; on mlx5 host posting goes through libibverbs), written into the next SQ
 *       slot.</li>
 *   <li>{@code decodeWqe}: the emulated NIC engine's decode of one WQE into a reused {@link WqeFields} (a mix of
 *       WRITE, READ, atomic and 8-byte inline WRITE).</li>
 *   <li>{@code cqePollDecode}: a batch of published CQEs polled (acquire of the tail) and decoded as
 *       {@code RingPoster.poll} does (one {@link DecodedCqe} each); the batch is written in the untimed setup.</li>
 *   <li>{@code cqeWriteThenPoll}: the emulated NIC writes a requester CQE (body, then the tail with a release store)
 *       and the same thread polls it: both sides of a completion without cross-core traffic.</li>
 * </ul>
 * Run: {@code java -cp samples/target/gda4j.jar org.openjdk.jmh.Main Mlx5CodecBenchmark -f 1 -wi 3 -i 5}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class Mlx5CodecBenchmark {
    static final int BATCH = 256;
    static final int QPN = 0x000123;
    static final int RKEY = 0x1000;
    static final int LKEY = 0x2000;

    /** An SQ and a CQ of {@code depth} entries each, in direct memory. */
    @State(Scope.Thread)
    public static class Rings {
        @Param({"256"})
        int depth;
        ByteBuffer sq;
        ByteBuffer cq;
        final WqeFields fields = new WqeFields();
        final byte[] payload = {1, 2, 3, 4, 5, 6, 7, 8};
        long wqeIndex;
        long cqeIndex;

        @Setup(Level.Trial)
        public void setUp() {
            sq = ByteBuffer.allocateDirect(depth * WqeDescriptor.WQEBB_SIZE).order(ByteOrder.nativeOrder());
            cq = ByteBuffer.allocateDirect(depth * CqeDescriptor.CQE_SIZE).order(ByteOrder.nativeOrder());
            CqeEncoder.initialize(cq);
            // Every WQE of the mix fits one WQEBB, so counter i sits in slot i: decodeWqe can walk the ring.
            for (int i = 0; i < depth; i++) {
                switch (i & 3) {
                    case 0:
                        WqeEncoder.writeRdmaWrite(sq, i, QPN, WqeDescriptor.FM_CE_SE_CQ_UPDATE, 0x10_0000L + 64L * i,
                                RKEY, 0x20_0000L + 64L * i, LKEY, 4096);
                        break;
                    case 1:
                        WqeEncoder.writeRdmaRead(sq, i, QPN, 0, 0x10_0000L, RKEY, 0x20_0000L, LKEY, 64);
                        break;
                    case 2:
                        WqeEncoder.writeAtomicFetchAdd(sq, i, QPN, WqeDescriptor.FM_CE_SE_CQ_UPDATE, 0x30_0000L, RKEY,
                                1, 0, LKEY);
                        break;
                    default:
                        WqeEncoder.writeRdmaWriteInline(sq, i, QPN, 0, 0x40_0000L, RKEY, payload, 0, payload.length);
                }
            }
            wqeIndex = depth;
        }
    }

    /** The CQEs of the next batch are published before the timed call. */
    @State(Scope.Thread)
    public static class CqeBatch extends Rings {
        long publishedFrom;

        @Setup(Level.Invocation)
        public void publish() {
            publishedFrom = cqeIndex;
            for (int k = 0; k < BATCH; k++) {
                long n = publishedFrom + k;
                CqeEncoder.writeRequester(cq, n, QPN, (int) n, Mlx5Opcode.RDMA_WRITE, 0);
            }
        }
    }

    @Benchmark
    public int encodeRdmaWrite(Rings s) {
        long i = s.wqeIndex++;
        return WqeEncoder.writeRdmaWrite(s.sq, i, QPN, WqeDescriptor.FM_CE_SE_CQ_UPDATE, 0x10_0000L + i, RKEY,
                0x20_0000L + i, LKEY, 4096);
    }

    @Benchmark
    public int encodeInline8(Rings s) {
        long i = s.wqeIndex++;
        return WqeEncoder.writeRdmaWriteInline(s.sq, i, QPN, 0, 0x40_0000L + i, RKEY, s.payload, 0, 8);
    }

    @Benchmark
    public long decodeWqe(Rings s) {
        long i = s.wqeIndex++ & (s.depth - 1); // the counters the ring was written with
        WqeFields f = s.fields;
        return WqeDecoder.decodeInto(s.sq, i, QPN, f).ordinal() + f.raddr() + f.byteCount() + f.swapAdd() + f.ds();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long cqePollDecode(CqeBatch s, Blackhole bh) {
        long n = s.publishedFrom;
        long end = n + BATCH;
        while (n < end && CqeDecoder.poll(s.cq, n) != CqeDecoder.EMPTY) {
            DecodedCqe cqe = CqeDecoder.decode(s.cq, n);
            bh.consume(cqe.wqeCounter() + cqe.byteCount());
            n++;
        }
        s.cqeIndex = n;
        return n;
    }

    @Benchmark
    public int cqeWriteThenPoll(Rings s) {
        long n = s.cqeIndex++;
        CqeEncoder.writeRequester(s.cq, n, QPN, (int) n, Mlx5Opcode.RDMA_WRITE, 0);
        return CqeDecoder.poll(s.cq, n);
    }
}

package io.gda4j.benchmarks;

import io.gda4j.proxy.SimulatedDeviceProducer;
import io.gda4j.proxy.TriggerFifo;
import io.gda4j.proxy.TriggerFifoDescriptor;
import io.gda4j.proxy.TriggerHandler;

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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The host side of the proxy FIFO, no GPU: nanoseconds per trigger for the proxy's poll, decode and pop, with
 * {@link SimulatedDeviceProducer} (the GPU's push protocol in Java) writing into a direct buffer laid out like the
 * mapped pinned FIFO region. The handler decodes every field (what the copy-engine handler reads before its driver
 * call) and hands them to a Blackhole; the driver calls themselves are not here.
 * <ul>
 *   <li>{@code pollDecodePop}: a batch of published triggers (a PUT / SIGNAL / PUT_SIGNAL / FLUSH mix) is polled,
 *       decoded and popped; ns per trigger of the consumer alone (the batch is written in the untimed setup).</li>
 *   <li>{@code pushPollSameThread}: one thread pushes a trigger with the device protocol and pops it: the whole
 *       protocol's CPU cost per trigger, without cross-core traffic.</li>
 *   <li>{@code crossThread}: a producer thread pushes as fast as the ring of {@code depth} slots lets it while the
 *       benchmark thread, as the proxy, pops one trigger per call: the sustained cost per trigger with the slots
 *       and the tail moving between cores, as they do between the GPU and the proxy's core.</li>
 * </ul>
 * Run: {@code java -cp samples/target/gda4j.jar org.openjdk.jmh.Main ProxyPollBenchmark -f 1 -wi 3 -i 5}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ProxyPollBenchmark {
    static final int BATCH = 256;
    static final long TIMEOUT_NANOS = 10_000_000_000L;

    /** Decodes what the copy-engine handler decodes; no driver calls. */
    static final class DecodingHandler implements TriggerHandler {
        Blackhole bh;
        long handled;

        @Override
        public void onTrigger(long position, long w0, long w1, long n0, long n1) {
            int kind = TriggerFifoDescriptor.kind(w0);
            switch (kind) {
                case TriggerFifoDescriptor.KIND_PUT:
                case TriggerFifoDescriptor.KIND_PUT_SIGNAL:
                    bh.consume(TriggerFifoDescriptor.dstOffset(w0) + TriggerFifoDescriptor.srcOffset(w1)
                            + TriggerFifoDescriptor.sizeBytes(w0, w1) + TriggerFifoDescriptor.dstMemory(w1));
                    if (kind == TriggerFifoDescriptor.KIND_PUT_SIGNAL) {
                        bh.consume(TriggerFifoDescriptor.wordOffset(n0) + TriggerFifoDescriptor.signalValue(n0, n1));
                    }
                    break;
                case TriggerFifoDescriptor.KIND_SIGNAL:
                case TriggerFifoDescriptor.KIND_ATOMIC_ADD:
                    bh.consume(TriggerFifoDescriptor.wordOffset(w0) + TriggerFifoDescriptor.signalValue(w0, w1)
                            + TriggerFifoDescriptor.signalOp(w0));
                    break;
                default:
                    bh.consume(position);
            }
            handled++;
        }
    }

    static ByteBuffer region(int depth) {
        return ByteBuffer.allocateDirect(TriggerFifoDescriptor.regionBytes(depth)).order(ByteOrder.nativeOrder());
    }

    /** One producer and one consumer over the same region, used by one thread. */
    @State(Scope.Thread)
    public static class Local {
        @Param({"512"})
        int depth;
        TriggerFifo fifo;
        SimulatedDeviceProducer producer;
        final DecodingHandler handler = new DecodingHandler();
        int i;

        @Setup(Level.Trial)
        public void setUp() {
            ByteBuffer r = region(depth);
            fifo = new TriggerFifo(r, depth);
            producer = new SimulatedDeviceProducer(r, depth, false);
        }

        /** Pushes trigger number i of a fixed mix: 4 PUT, 2 SIGNAL, 1 PUT_SIGNAL, 1 FLUSH in 8. */
        void pushOne() {
            int k = i++ & 7;
            if (k < 4) {
                producer.push(TriggerFifoDescriptor.putWord0(TriggerFifoDescriptor.KIND_PUT, 4096L * k, 4096),
                        TriggerFifoDescriptor.putWord1(65_536, 4096, 0, 0), TIMEOUT_NANOS);
            } else if (k < 6) {
                producer.push(TriggerFifoDescriptor.signalWord0(TriggerFifoDescriptor.KIND_SIGNAL, k & 1, 8L * k, i, 0),
                        TriggerFifoDescriptor.signalWord1(i), TIMEOUT_NANOS);
            } else if (k == 6) {
                producer.push2(TriggerFifoDescriptor.putWord0(TriggerFifoDescriptor.KIND_PUT_SIGNAL, 0, 8),
                        TriggerFifoDescriptor.putWord1(0, 8, 0, 0),
                        TriggerFifoDescriptor.signalWord0(TriggerFifoDescriptor.KIND_SIGNAL, 0, 64, i, 0),
                        TriggerFifoDescriptor.signalWord1(i), TIMEOUT_NANOS);
            } else {
                producer.push(TriggerFifoDescriptor.controlWord0(TriggerFifoDescriptor.KIND_FLUSH), 0, TIMEOUT_NANOS);
            }
        }
    }

    /** The consumer's batch is published before the timed call. */
    @State(Scope.Thread)
    public static class Batch extends Local {
        @Setup(Level.Invocation)
        public void publish() {
            for (int k = 0; k < BATCH; k++) {
                pushOne();
            }
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long pollDecodePop(Batch s, Blackhole bh) {
        s.handler.bh = bh;
        long n = 0;
        while (n < BATCH) {
            n += s.fifo.poll(s.handler, BATCH);
        }
        return n;
    }

    @Benchmark
    public int pushPollSameThread(Local s, Blackhole bh) {
        s.handler.bh = bh;
        s.pushOne();
        return s.fifo.poll(s.handler, 1);
    }

    /** A producer thread pushing PUT triggers as fast as the ring lets it, for the whole iteration. */
    @State(Scope.Thread)
    public static class Streaming extends Local {
        private Thread pusher;
        private volatile boolean stop;

        @Setup(Level.Iteration)
        public void startPusher() {
            stop = false;
            pusher = new Thread(() -> {
                while (!stop) {
                    producer.push(TriggerFifoDescriptor.putWord0(TriggerFifoDescriptor.KIND_PUT, 0, 4096),
                            TriggerFifoDescriptor.putWord1(4096, 4096, 0, 0), TIMEOUT_NANOS);
                }
            }, "simulated-gpu");
            pusher.setDaemon(true);
            pusher.start();
        }

        /** Drains while the pusher finishes its last push (a claimed slot must be published before it can end). */
        @TearDown(Level.Iteration)
        public void stopPusher() throws InterruptedException {
            stop = true;
            while (pusher.isAlive()) {
                fifo.poll(handler, 64);
            }
            pusher.join();
            while (fifo.poll(handler, 64) > 0) {
                // empty the ring for the next iteration
            }
        }
    }

    @Benchmark
    public int crossThread(Streaming s, Blackhole bh) {
        s.handler.bh = bh;
        int n;
        while ((n = s.fifo.poll(s.handler, 1)) == 0) {
            Thread.onSpinWait();
        }
        return n;
    }
}

package io.gda4j.world;

import io.gda4j.transport.Transport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What every transport must do on real GPUs, run once per transport by a subclass (p2p: {@code P2pGpuTest}, ibgda:
 * {@code IbgdaGpuTest}, proxy: {@code ProxyGpuTest} in gda4j-proxy): a two-rank world whose pairs it connects, and
 * puts of every scope, of sizes from 1 byte up and at unaligned offsets, that move exactly their bytes, with the
 * bytes around the destination untouched and a put_signal's signal seen after its data. The subclass makes the world
 * and says how its transport is tried ({@link Trial}); its own tests use the same world and buffers.
 *
 * <p>One instance per class: the world is opened once in {@link #openWorld()} and closed after the last test.
 * Subclasses carry {@code @RequiresCuda} and {@code @Tag("gpu")}.
 */
@Tag("gpu")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class TransportConformanceGpuTest {
    /** What the bytes around a put's destination hold; a put that writes past its range changes them. */
    protected static final byte POISON = (byte) 0xA5;
    /** Poisoned bytes checked on each side of a put's destination. */
    protected static final int MARGIN = 64;

    private final Trial trial;
    protected LocalWorld world;
    protected DeviceOps ops;
    protected HeapBuffer src;
    protected HeapBuffer dst;
    protected HeapBuffer signals;

    protected TransportConformanceGpuTest(Trial trial) {
        this.trial = trial;
    }

    /**
     * How a transport is tried.
     *
     * @param transport           the transport that must connect rank 0 and rank 1, both ways
     * @param bufferBytes         bytes of each of the source and destination buffers
     * @param putTrials           puts of each size; the last one is a put_signal
     * @param putSeed             seed of the random data and offsets, plus the scope's ordinal
     * @param putSizes            sizes of the puts
     * @param threadPutMaxBytes   the largest put tried with one thread
     * @param destinationSlack    bytes between the destination buffer's start and the lowest destination tried
     * @param signalLandsOnReturn put_signal returns only once its signal has landed (ibgda: it ends with quiet), so
     *                            the host reads it at once; the peer waits for it in any case
     * @param modules             modules the tests launch kernels of while another rank's kernel may run: loaded
     *                            up front
     */
    protected record Trial(Transport transport, long bufferBytes, int putTrials, long putSeed, long[] putSizes,
                           long threadPutMaxBytes, int destinationSlack, boolean signalLandsOnReturn,
                           String... modules) {
        public Trial(Transport transport, long bufferBytes, int putTrials, long putSeed, long... putSizes) {
            this(transport, bufferBytes, putTrials, putSeed, putSizes, Long.MAX_VALUE, 0, false);
        }

        public Trial threadPutsUpTo(long bytes) {
            return new Trial(transport, bufferBytes, putTrials, putSeed, putSizes, bytes, destinationSlack,
                    signalLandsOnReturn, modules);
        }

        public Trial destinationsFrom(int slack) {
            return new Trial(transport, bufferBytes, putTrials, putSeed, putSizes, threadPutMaxBytes, slack,
                    signalLandsOnReturn, modules);
        }

        public Trial signalLandedOnReturn() {
            return new Trial(transport, bufferBytes, putTrials, putSeed, putSizes, threadPutMaxBytes,
                    destinationSlack, true, modules);
        }

        public Trial loading(String... names) {
            return new Trial(transport, bufferBytes, putTrials, putSeed, putSizes, threadPutMaxBytes,
                    destinationSlack, signalLandsOnReturn, names);
        }
    }

    /** A two-rank world whose pairs this transport connects (ranks on GPUs 0 and 1, or both on GPU 0). */
    protected abstract LocalWorld createWorld();

    @BeforeAll
    void openWorld() {
        world = createWorld();
        ops = new DeviceOps(world);
        if (trial.modules().length > 0) {
            world.loadModules(trial.modules());
        }
        src = world.heap().allocate(trial.bufferBytes());
        dst = world.heap().allocate(trial.bufferBytes());
        signals = world.heap().allocateSignals(16);
    }

    @AfterAll
    void closeWorld() {
        if (world != null) {
            world.close();
        }
    }

    @BeforeEach
    void clearErrors() {
        world.clearErrors();
    }

    @Test
    void everyPairIsConnectedByTheTransportOrToItself() {
        assertEquals(Transport.SELF, world.transport(0, 0));
        assertEquals(trial.transport(), world.transport(0, 1));
        assertEquals(trial.transport(), world.transport(1, 0));
    }

    @ParameterizedTest
    @EnumSource(Scope.class)
    void putsMoveExactlyTheirBytes(Scope scope) {
        Random rnd = new Random(trial.putSeed() + scope.ordinal());
        for (long size : trial.putSizes()) {
            if (scope == Scope.THREAD && size > trial.threadPutMaxBytes()) {
                continue;
            }
            for (int i = 0; i < trial.putTrials(); i++) {
                long srcOff = src.offset() + rnd.nextInt(64);
                long dstOff = dst.offset() + trial.destinationSlack() + rnd.nextInt(64);
                checkPut(scope, (int) size, srcOff, dstOff, rnd, i == trial.putTrials() - 1);
            }
        }
        // Aligned 8-byte puts, which random offsets seldom give: the proxy carries them inside the trigger.
        if (Arrays.stream(trial.putSizes()).anyMatch(size -> size == 8)) {
            long srcOff = (src.offset() + 7) & ~7L;
            long dstOff = (dst.offset() + trial.destinationSlack() + 7) & ~7L;
            checkPut(scope, 8, srcOff, dstOff, rnd, false);
            checkPut(scope, 8, srcOff + 8, dstOff + 16, rnd, true);
        }
        // Offsets equal mod 16, which random ones give one time in 16: a direct copy then peels a head of bytes up to
        // the 16-byte boundary (shift 5), moves 16-byte vectors, and ends in a tail of 8-, 4-, 2- and 1-byte pieces.
        for (int size : new int[] {1, 2, 3, 5, 7, 8, 9, 12, 14, 15, 17, 24, 31, 40}) {
            if (scope == Scope.THREAD && size > trial.threadPutMaxBytes()) {
                continue;
            }
            for (int shift : new int[] {0, 5}) {
                long srcOff = ((src.offset() + 15) & ~15L) + shift;
                long dstOff = ((dst.offset() + trial.destinationSlack() + 15) & ~15L) + shift;
                checkPut(scope, size, srcOff, dstOff, rnd, size == 8 || size == 31);
            }
        }
    }

    private void checkPut(Scope scope, int size, long srcOff, long dstOff, Random rnd, boolean withSignal) {
        Rank r0 = world.rank(0);
        Rank r1 = world.rank(1);
        byte[] data = new byte[size];
        rnd.nextBytes(data);
        r0.writeHeap(srcOff, data);
        // The margin before the destination stops at the start of the destination buffer.
        int before = (int) Math.min(MARGIN, dstOff - dst.offset());
        r1.fillHeap(dstOff - before, before + size + MARGIN, POISON);
        if (withSignal) {
            long sig = signals.word(0);
            r1.writeHeapLong(sig, 0);
            ops.putSignal(0, 1, dstOff, srcOff, size, scope, sig, SignalOp.SET, 7);
            if (trial.signalLandsOnReturn()) {
                assertEquals(7, r1.readHeapLong(sig), "signal after the data");
            }
            assertEquals(7, ops.waitUntil(1, sig, Cmp.EQ, 7));
        } else {
            ops.put(0, 1, dstOff, srcOff, size, scope);
        }
        byte[] got = new byte[before + size + MARGIN];
        r1.readHeap(dstOff - before, got);
        for (int i = 0; i < got.length; i++) {
            byte want = i < before || i >= before + size ? POISON : data[i - before];
            if (got[i] != want) {
                throw new AssertionError(String.format("%s put of %d bytes (src 0x%x -> dst 0x%x): byte %d is 0x%02x,"
                        + " want 0x%02x (%s)", scope, size, srcOff, dstOff, i - before, got[i], want,
                        i < before ? "before the destination" : i >= before + size ? "after the destination" : "data"));
            }
        }
    }
}

package io.gda4j.world;

import io.gda4j.transport.Transport;

import java.util.Arrays;

/**
 * One process of a {@link ProcessWorldGpuTest} world; its rank and the root come from {@code GDA4J_*} variables, as a
 * launcher would set them. Talks to the test by lines on stdout. Modes:
 * <ul>
 * <li>{@code exchange}: every rank puts a pattern of its own into the next rank's heap with a SET signal, adds 1 to
 *     every peer's counter word, waits for both, checks the bytes, prints {@code OK rank}.</li>
 * <li>{@code ibgda}: {@code exchange} with every pair on ibgda (checked: {@code BAD} otherwise), then every rank,
 *     rank 0 itself included (through its loopback QP), adds 1 to rank 0's counter {@value #ADDS} times with NIC
 *     atomics; rank 0 waits for all of them and checks the sum is exact, prints {@code COUNTED rank}.</li>
 * <li>{@code survive:V}: after the world is up every rank prints {@code READY}; rank V sleeps until it is killed, the
 *     others wait on the GPU for a signal that only V would send, and print {@code DIED rank dead ms} when the wait
 *     ends with the {@link RankDiedException} (ms: from the wait's start).</li>
 * <li>{@code abort:V}: after {@code READY} the others wait on the GPU for a signal nobody sends; rank V sleeps 1 s and
 *     calls {@link World#abort()}; the others print {@code STOPPED rank ms message} when their wait ends with a
 *     {@link DeviceErrorException}, and every rank clears its errors and meets the others again.</li>
 * </ul>
 */
public final class ProcessWorldChild {
    static final int BYTES = 1 << 16;
    /** Adds per rank to one counter in {@code ibgda} mode: few, since processes on one GPU are time-sliced. */
    static final int ADDS = 20;

    private ProcessWorldChild() {
    }

    static byte[] pattern(int rank) {
        byte[] p = new byte[BYTES];
        for (int i = 0; i < BYTES; i++) {
            p[i] = (byte) (i * 7 + rank * 13 + 1);
        }
        return p;
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        try (World world = Worlds.create()) {
            int me = world.localRanks().get(0).rank();
            int n = world.size();
            say("UP " + me + " " + world);
            DeviceOps ops = new DeviceOps(world);
            HeapBuffer src = world.heap().allocate(BYTES);
            HeapBuffer dst = world.heap().allocate(BYTES);
            HeapBuffer signals = world.heap().allocateSignals(2);
            long setWord = signals.word(0);
            long addWord = signals.word(1);
            Rank r = world.rank(me);
            if (mode.equals("ibgda")) {
                for (int p = 0; p < n; p++) {
                    if (p != me && world.transport(me, p) != Transport.IBGDA) {
                        say("BAD " + me + " reaches rank " + p + " over " + world.transport(me, p));
                    }
                }
            }
            if (mode.equals("exchange") || mode.equals("ibgda")) {
                r.writeHeap(src.offset(), pattern(me));
                world.barrier();
                int next = (me + 1) % n;
                int prev = (me + n - 1) % n;
                ops.putSignal(me, next, dst.offset(), src.offset(), BYTES, Scope.BLOCK, setWord, SignalOp.SET, 1);
                for (int p = 0; p < n; p++) {
                    if (p != me) {
                        ops.signal(me, p, addWord, SignalOp.ADD, 1);
                    }
                }
                ops.waitUntil(me, setWord, Cmp.GE, 1);
                ops.waitUntil(me, addWord, Cmp.GE, n - 1);
                byte[] got = new byte[BYTES];
                r.readHeap(dst.offset(), got);
                if (!Arrays.equals(got, pattern(prev))) {
                    say("BAD " + me + " the bytes from rank " + prev + " differ");
                } else if (r.readHeapLong(addWord) != n - 1) {
                    say("BAD " + me + " counter " + r.readHeapLong(addWord) + " after " + (n - 1) + " adds");
                } else {
                    say("OK " + me);
                }
                world.barrier();
                if (mode.equals("ibgda")) {
                    HeapBuffer counter = world.heap().allocateSignals(1);
                    world.barrier();
                    for (int i = 0; i < ADDS; i++) {
                        ops.signal(me, 0, counter.word(0), SignalOp.ADD, 1);
                    }
                    if (me == 0) {
                        ops.waitUntil(0, counter.word(0), Cmp.GE, (long) n * ADDS);
                    }
                    world.barrier();
                    if (me == 0) {
                        long sum = r.readHeapLong(counter.word(0));
                        say(sum == (long) n * ADDS ? "COUNTED 0" : "BAD 0 counter " + sum + " after " + n * ADDS
                                + " NIC atomic adds");
                    }
                    world.barrier();
                }
            } else {
                aborts(world, ops, me, setWord, mode);
            }
        } catch (Throwable t) {
            say("FAILED " + t);
            t.printStackTrace(System.out);
            System.exit(3);
        }
        // Printed once close() has returned: the world's close barriers and frees are part of what is tested.
        say("CLOSED");
        System.exit(0);
    }

    /** The survive:V and abort:V modes. */
    private static void aborts(World world, DeviceOps ops, int me, long setWord, String mode) throws Exception {
        int victim = Integer.parseInt(mode.substring(mode.indexOf(':') + 1));
        world.barrier();
        say("READY " + me);
        if (mode.startsWith("abort:")) {
            if (me == victim) {
                Thread.sleep(1000); // the others' waits are spinning by now
                world.abort();
                world.clearErrors();
            } else {
                long start = System.nanoTime();
                try {
                    ops.waitUntil(me, setWord, Cmp.GE, 1);
                    say("ERROR " + me + " the wait ended without the signal");
                } catch (DeviceErrorException e) {
                    say("STOPPED " + me + " " + (System.nanoTime() - start) / 1_000_000 + " " + e.getMessage());
                }
                world.clearErrors();
            }
            world.barrier();
            say("AGAIN " + me);
            world.barrier();
            return;
        }
        if (me == victim) {
            Thread.sleep(Long.MAX_VALUE); // waits for its SIGKILL
        }
        long start = System.nanoTime();
        try {
            ops.waitUntil(me, setWord, Cmp.GE, 1);
            say("ERROR " + me + " the wait ended without the signal");
        } catch (RankDiedException e) {
            say("DIED " + me + " " + e.deadRank() + " " + (System.nanoTime() - start) / 1_000_000 + " "
                    + e.getMessage());
        }
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}

package io.gda4j.proxy;

import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_ATOMIC_ADD;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_ADD;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_SET;

import com.sun.jna.Pointer;

import io.gda4j.bootstrap.Bootstrap;
import io.gda4j.bootstrap.BootstrapConfig;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.emulated.EmulatedNic;
import io.gda4j.nic.emulated.EmulatedNicConfig;
import io.gda4j.nic.emulated.HostMemoryPlatform;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One rank of a world of two in its own JVM, for {@link VerbsProcessesTest}: the verbs handler between real
 * processes on the emulated NIC over host memory. Its heap is a memory file the other process maps (standing for the
 * world's CUDA IPC mapping); what a process publishes (its pid, its heap's handle and its {@link VerbsOffer}) goes on
 * a bootstrap all-gather, as the world's transport offers do. Talks to the test by lines on stdout; a line starting
 * with {@code ERROR} fails it.
 *
 * <p>Arguments: rank port token mode (port: where rank 0 listens). Modes: {@code exchange}
 * (each rank sends the other puts, signals and atomics, checks what landed in its own heap and prints {@code OK}),
 * {@code starve} (after one round, rank 1 prints {@code READY} and waits to be killed; rank 0 waits for the bootstrap
 * to see it die, sends on, and prints {@code STARVED} with its channel's problem once its credits run out).
 */
public final class VerbsProcessChild {
    static final int HEAP = 1 << 16;
    static final int[] SIZES = {1, 7, 8, 63, 64, 1000, 4096, 8191};
    static final long COUNTER = HEAP - 56;
    static final long ATOMIC_WORD = HEAP - 48;
    static final long FLAG = HEAP - 64;
    static final long FLAG_VALUE = 0x1234_5678_9abc_def0L;

    private VerbsProcessChild() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(args[0]);
        int port = Integer.parseInt(args[1]);
        String token = args[2];
        String mode = args[3];
        int peer = 1 - rank;
        CountDownLatch peerDied = new CountDownLatch(1);
        Bootstrap bootstrap = Bootstrap.join(BootstrapConfig.of(rank, 2, new InetSocketAddress("127.0.0.1", port),
                token).withTimeouts(30_000, 60_000), (dead, why) -> peerDied.countDown());
        HostMemoryPlatform platform = new HostMemoryPlatform();
        CrossProcessMemory memory = new PlatformMemory(platform);
        EmulatedNic nic = new EmulatedNic(platform, new EmulatedNicConfig(EmulatedNicConfig.IDLE_BACKOFF, true));
        VerbsSession session = new VerbsSession(nic, bytes -> {
            throw new AssertionError("a session across processes allocates no credit block of its own");
        }, 256, memory, memory);
        CrossProcessMemory.Exported heap = memory.export(HEAP, "rank " + rank + " heap");
        session.registerHeap(rank, null, heap.address(), HEAP, MemoryKind.DEVICE);
        byte[] offer = session.offerAcrossProcesses(rank, 2).encode();

        byte[] heapHandle = heap.handle();
        byte[][] all = bootstrap.allGather(ByteBuffer.allocate(8 + 4 + heapHandle.length + offer.length)
                .putLong(ProcessHandle.current().pid()).putInt(heapHandle.length).put(heapHandle).put(offer).array());
        ByteBuffer theirs = ByteBuffer.wrap(all[peer]);
        String description = "rank " + peer + " (pid " + theirs.getLong() + ")";
        byte[] peerHeapHandle = new byte[theirs.getInt()];
        theirs.get(peerHeapHandle);
        byte[] peerOffer = new byte[theirs.remaining()];
        theirs.get(peerOffer);
        CrossProcessMemory.Opened peerHeap = memory.open(peerHeapHandle, HEAP, description + "'s heap");
        VerbsLink link = session.connectAcrossProcesses(rank, null, peer, description, peerHeap.address(), HEAP,
                VerbsOffer.decode(description, peerOffer));
        VerbsTestChannel channel = new VerbsTestChannel(link, 4, mode.equals("starve")
                ? TimeUnit.MILLISECONDS.toNanos(1500) : TimeUnit.SECONDS.toNanos(20));
        ProxyService service = new ProxyService(new ProxyConfig(1, VerbsTestChannel.DEPTH, ProxyConfig.IDLE_BACKOFF,
                ProxyConfig.SignalPath.AUTO, Duration.ofSeconds(5)));
        service.add(channel.channel, 0);

        byte[] mine = pattern(rank);
        new Pointer(heap.address()).write(0, mine, 0, mine.length);
        bootstrap.barrier(); // both sources are written before either sends
        send(channel);
        channel.flushAndWait();
        bootstrap.barrier(); // both sides' sends have landed
        String wrong = check(heap.address(), pattern(peer));
        if (wrong != null) {
            say("ERROR rank " + rank + ": " + wrong);
            System.exit(1);
        }
        say("OK rank " + rank + " posted " + channel.handler.posted() + " granted " + channel.handler.grantedToPeer());

        if (mode.equals("starve")) {
            if (rank == 1) {
                say("READY " + rank);
                Thread.sleep(Long.MAX_VALUE); // until the test kills this process
            }
            if (!peerDied.await(30, TimeUnit.SECONDS)) {
                say("ERROR rank 0: the bootstrap did not see rank 1 die");
                System.exit(1);
            }
            for (int i = 0; i < 20 && !channel.channel.isFaulted(); i++) {
                channel.producer.push(TriggerFifoDescriptor.signalWord0(KIND_SIGNAL, SIGNAL_OP_ADD, COUNTER + 8, 1,
                        TriggerFifoDescriptor.MEMORY_HEAP), TriggerFifoDescriptor.signalWord1(1),
                        TimeUnit.SECONDS.toNanos(10));
            }
            VerbsTestChannel.await(channel.channel::isFaulted, "the sender to run out of credits");
            say("STARVED " + channel.handler.posted() + " " + channel.channel.problem().orElse("?"));
            System.exit(0);
        }
        service.close();
        session.close();
        nic.close();
        bootstrap.barrier(); // the peer no longer writes here before this heap goes
        peerHeap.close();
        heap.close();
        bootstrap.close();
        System.exit(0);
    }

    static byte[] pattern(int seed) {
        byte[] b = new byte[HEAP / 2];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Puts of every size into the peer's upper half, ADDs, atomics, and a put_signal SET last. */
    static void send(VerbsTestChannel c) {
        long dst = HEAP / 2;
        for (int i = 0; i < SIZES.length; i++) {
            c.put(dst, 3 * i, SIZES[i]);
            dst += SIZES[i] + 5;
        }
        for (int i = 0; i < 50; i++) {
            c.signal(KIND_SIGNAL, SIGNAL_OP_ADD, COUNTER, 3);
            c.signal(KIND_ATOMIC_ADD, SIGNAL_OP_ADD, ATOMIC_WORD, -1);
        }
        c.putSignal(HEAP / 2 + 16384, 0, 4096, SIGNAL_OP_SET, FLAG, FLAG_VALUE);
    }

    /** What the peer's {@link #send} must have left in this heap, or null when it did. */
    static String check(long heap, byte[] peerSource) {
        Pointer p = new Pointer(heap);
        long dst = HEAP / 2;
        for (int i = 0; i < SIZES.length; i++) {
            byte[] sent = Arrays.copyOfRange(peerSource, 3 * i, 3 * i + SIZES[i]);
            if (!Arrays.equals(sent, p.getByteArray(dst, SIZES[i]))) {
                return "the " + SIZES[i] + "-byte put differs";
            }
            if (!Arrays.equals(new byte[5], p.getByteArray(dst + SIZES[i], 5))) {
                return "the gap after the " + SIZES[i] + "-byte put was written";
            }
            dst += SIZES[i] + 5;
        }
        if (!Arrays.equals(Arrays.copyOf(peerSource, 4096), p.getByteArray(HEAP / 2 + 16384, 4096))) {
            return "the put of the put_signal differs";
        }
        if (p.getLong(FLAG) != FLAG_VALUE || p.getLong(COUNTER) != 150 || p.getLong(ATOMIC_WORD) != -50) {
            return String.format("flag 0x%x, counter %d (150), atomic word %d (-50)", p.getLong(FLAG),
                    p.getLong(COUNTER), p.getLong(ATOMIC_WORD));
        }
        return null;
    }

    static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}

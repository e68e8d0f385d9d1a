package io.gda4j.proxy;

import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_ATOMIC_ADD;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_ADD;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_SET;
import static io.gda4j.proxy.VerbsTestChannel.SECOND;
import static io.gda4j.proxy.TwoWayTraffic.word;
import static io.gda4j.proxy.VerbsTestChannel.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.emulated.EmulatedFault;
import io.gda4j.nic.emulated.EmulatedNic;
import io.gda4j.nic.emulated.EmulatedNicConfig;
import io.gda4j.nic.emulated.HostMemoryPlatform;
import io.gda4j.world.ErrorRecord;
import io.gda4j.world.ErrorRecordDescriptor.Op;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The verbs handler between two processes of one host, on the emulated NIC over host memory (no GPU): each
 * "process" has its own NIC, session, proxy service and heap; they share nothing but what they publish. Each heap
 * is a memory file its process lends and the other maps at another address (as the world maps a peer's heap by CUDA
 * IPC), and each side connects its own direction from the other's published offer bytes. What crosses: byte-exact
 * puts, signals and atomics, landing in the peer's own view of its heap; credits granted by the receiver's NIC
 * writes into the sender's credit block; a starved sender naming the receiver; a refused key or range, or a peer that
 * went away, as an error CQE and a device error record naming the peer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VerbsAcrossProcessesTest {
    static final int HEAP = 1 << 16;
    static final long SHORT_CREDIT_TIMEOUT = TimeUnit.MILLISECONDS.toNanos(300);
    static final long LONG_CREDIT_TIMEOUT = 20 * SECOND;

    HostMemoryPlatform platform;
    /** Lends host memory as a process does, and lets the opening process's emulated NIC write what it maps. */
    CrossProcessMemory memory;
    Process a;
    Process b;

    /** One process of the job: rank {@code rank} of a world of two. */
    final class Process implements AutoCloseable {
        final int rank;
        final String description;
        final EmulatedNic nic;
        final VerbsSession session;
        /** Its heap as its own process addresses it. */
        final CrossProcessMemory.Exported heap;
        final ProxyService service;
        /** What it published for the other process (the bytes the world's all-gather carries). */
        final byte[] published;
        final List<CrossProcessMemory.Opened> mappings = new ArrayList<>();

        Process(int rank) {
            this.rank = rank;
            this.description = "rank " + rank + " (pid " + (4000 + rank) + " on host7)";
            // A short transport retry: a test with a peer that went away does not wait out the default.
            nic = new EmulatedNic(platform, new EmulatedNicConfig(EmulatedNicConfig.IDLE_BACKOFF, true)
                    .withRetryNanos(TimeUnit.MILLISECONDS.toNanos(20)));
            session = new VerbsSession(nic, bytes -> {
                throw new AssertionError("a session across processes lends its credit blocks, it allocates none");
            }, 256, memory, memory);
            heap = memory.export(HEAP, "rank " + rank + " heap");
            session.registerHeap(rank, null, heap.address(), HEAP, MemoryKind.DEVICE);
            published = session.offerAcrossProcesses(rank, 2).encode();
            service = new ProxyService(new ProxyConfig(1, VerbsTestChannel.DEPTH, ProxyConfig.IDLE_BACKOFF,
                    ProxyConfig.SignalPath.AUTO, Duration.ofSeconds(5)));
        }

        /** Maps the peer's heap here, as the world's CUDA IPC mapping does, and connects with its published offer. */
        VerbsLink connect(Process peer) {
            CrossProcessMemory.Opened mapping = memory.open(peer.heap.handle(), HEAP, peer.description + "'s heap");
            mappings.add(mapping);
            return session.connectAcrossProcesses(rank, null, peer.rank, peer.description, mapping.address(), HEAP,
                    VerbsOffer.decode(peer.description, peer.published));
        }

        long heapAt(long offset) {
            return heap.address() + offset;
        }

        @Override
        public void close() {
            try {
                service.close();
            } catch (ProxyException expectedAfterAFailure) {
                // a test that failed a channel on purpose leaves it reporting that failure
            }
            session.close();
            nic.close();
            mappings.forEach(CrossProcessMemory.Opened::close);
            heap.close();
        }
    }

    @BeforeEach
    void open() {
        platform = new HostMemoryPlatform();
        memory = new PlatformMemory(platform);
        a = new Process(0);
        b = new Process(1);
    }

    @AfterEach
    void close() {
        a.close();
        b.close();
    }

    static byte[] pattern(int length, int seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    @Test
    void eachSideConnectsWithExactlyWhatThePeerPublished() {
        VerbsOffer offerOfB = VerbsOffer.decode(b.description, b.published);
        assertArrayEquals(b.published, offerOfB.encode(), "the bytes round-trip");
        assertEquals(b.heap.address(), offerOfB.heapAddress(), "B's heap as B addresses it");
        assertEquals(b.session.heapRegistration(1).rkey(), offerOfB.heapRkey());
        assertEquals(HEAP, offerOfB.heapBytes());
        assertEquals(NicAccess.HEAP, offerOfB.heapAccess());
        assertEquals(2, offerOfB.creditBlocks(), "one credit block per rank of the world");

        VerbsLink ab = a.connect(b);
        VerbsLink ba = b.connect(a);
        VerbsOffer offerOfA = VerbsOffer.decode(a.description, a.published);
        assertEquals(0, ab.localRank());
        assertEquals(1, ab.peerRank());
        assertEquals(b.description, ab.peerDescription());
        assertEquals(a.heap.address(), ab.localHeap());
        assertEquals(a.session.heapRegistration(0).lkey(), ab.localLkey());
        assertEquals(offerOfB.heapAddress(), ab.peerHeap(), "WQEs name B's own addresses, as on the wire");
        assertEquals(offerOfB.heapRkey(), ab.peerRkey());
        assertEquals(HEAP, ab.heapBytes());
        assertEquals(offerOfB.creditBlockFor(0), ab.peerCredits(), "B's block for rank 0");
        assertEquals(offerOfB.creditsRkey(), ab.peerCreditsRkey());
        assertFalse(ab.relaxedOrdering());
        assertEquals(offerOfA.creditBlockFor(1), ba.peerCredits(), "A's block for rank 1");
        assertEquals(offerOfA.heapRkey(), ba.peerRkey());
        assertEquals(1, a.session.heapRegistrations(), "A's heap registered once on A's NIC");
        assertEquals(1, b.session.heapRegistrations(), "B's heap registered once on B's NIC");
        assertNotEquals(a.session.heapRegistration(0).rkey(), b.session.heapRegistration(1).rkey(),
                "two NICs, two key spaces");
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> a.connect(b));
        assertTrue(twice.getMessage().contains("connected to " + b.description + " already"), twice.getMessage());
    }

    @Test
    void putsSignalsAndAtomicsLandByteExactInThePeersOwnViewOfItsHeapBothWays() {
        VerbsTestChannel ab = new VerbsTestChannel(a.connect(b), 4, LONG_CREDIT_TIMEOUT); // a small window: many grants
        VerbsTestChannel ba = new VerbsTestChannel(b.connect(a), 4, LONG_CREDIT_TIMEOUT);
        assertNotEquals(b.heap.address(), a.mappings.get(0).address(), "A reaches B's heap at another address");
        a.service.add(ab.channel, 0);
        b.service.add(ba.channel, 0);
        byte[] fromA = pattern(HEAP / 2, 1);
        byte[] fromB = pattern(HEAP / 2, 2);
        new Pointer(a.heapAt(0)).write(0, fromA, 0, fromA.length);
        new Pointer(b.heapAt(0)).write(0, fromB, 0, fromB.length);
        TwoWayTraffic.runAndCheck(ab, ba, a::heapAt, b::heapAt, HEAP, fromA, fromB,
                new int[] {1, 7, 8, 63, 64, 1000, 4096, 8191}, 50);
    }

    @Test
    void aSenderNeverPostsPastTheReceiversGrantAndATimedOutWaitNamesTheReceiver() {
        VerbsTestChannel ab = new VerbsTestChannel(a.connect(b), 8, SHORT_CREDIT_TIMEOUT);
        VerbsTestChannel ba = new VerbsTestChannel(b.connect(a), 3, LONG_CREDIT_TIMEOUT);
        // B's proxy runs one pass and stops: its grant of 3 reaches A's credit block through B's NIC, and no more.
        ba.handler.progress();
        ByteBuffer aCredits = ab.link.localCredits().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        await(() -> CreditBlockDescriptor.grantedAcquire(aCredits) == 3, "B's first grant to land in A's block");
        a.service.add(ab.channel, 0);
        for (int i = 0; i < 5; i++) {
            new Pointer(a.heapAt(64 * i)).setLong(0, 1000 + i);
            ab.put(64 * i, 64 * i, 8);
        }
        await(ab.channel::isFaulted, "the sender to give up waiting for credits");
        for (int i = 0; i < 3; i++) {
            assertEquals(1000 + i, word(b.heapAt(64 * i)), "granted message " + i);
        }
        assertEquals(0, word(b.heapAt(64 * 3)), "the 4th put went past the grant");
        assertEquals(0, word(b.heapAt(64 * 4)), "the 5th put went past the grant");
        assertEquals(3, ab.handler.posted());
        String problem = ab.channel.problem().orElseThrow();
        assertTrue(problem.contains("credits from the receiver, " + b.description), problem);
        assertTrue(problem.contains("3 messages posted, 3 granted") && problem.contains("rank 1 died"), problem);
        assertEquals(1, ab.aborts.get(), "the failure raises the abort flag");
        ByteBuffer bCredits = ba.link.localCredits().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(3, CreditBlockDescriptor.deliveredAcquire(bCredits),
                "a starved sender reports to B's block what it delivered, so B could grant more");
    }

    @Test
    void aReceiverWhoseProxyStopsIsNamedBySendersThatRunOutOfCredits() {
        VerbsTestChannel ab = new VerbsTestChannel(a.connect(b), 4, 2 * SECOND);
        VerbsTestChannel ba = new VerbsTestChannel(b.connect(a), 4, LONG_CREDIT_TIMEOUT);
        a.service.add(ab.channel, 0);
        b.service.add(ba.channel, 0);
        for (int i = 0; i < 20; i++) {
            ab.signal(KIND_SIGNAL, SIGNAL_OP_ADD, 0, 1);
        }
        ab.flushAndWait();
        assertEquals(20, word(b.heapAt(0)));
        b.service.remove(ba.channel); // B's proxy is gone: no more grants
        for (int i = 0; i < 20; i++) {
            ab.signal(KIND_SIGNAL, SIGNAL_OP_ADD, 0, 1);
        }
        await(ab.channel::isFaulted, "the sender to give up waiting for credits");
        String problem = ab.channel.problem().orElseThrow();
        assertTrue(problem.contains("the receiver, " + b.description) && problem.contains("rank 1 died"), problem);
        long landed = word(b.heapAt(0));
        assertTrue(landed >= 20 && landed <= 24, "at most the window beyond the last delivery report: " + landed);
        assertEquals(landed, ab.handler.posted(), "every posted message landed, and only those");
    }

    @Test
    void aKeyThePeersNicNeverMadeGivesAnErrorCqeAndADeviceErrorRecordNamingThePeer() {
        VerbsLink good = a.connect(b);
        VerbsLink badKey = VerbsTestChannel.withWrongPeerKey(good);
        VerbsTestChannel sender = new VerbsTestChannel(badKey, 8, LONG_CREDIT_TIMEOUT);
        VerbsTestChannel receiver = new VerbsTestChannel(b.connect(a), 8, LONG_CREDIT_TIMEOUT);
        a.service.add(sender.channel, 0);
        b.service.add(receiver.channel, 0);
        long at = sender.put(256, 0, 64);
        ErrorRecord record = sender.awaitRecord();
        VerbsTestChannel.assertUnknownKeyCqe(record, good);
        String problem = sender.channel.problem().orElseThrow();
        assertTrue(problem.contains("trigger " + at) && problem.contains("toward " + b.description)
                && problem.contains("Rank 1 refused the key or the range"), problem);
        assertEquals(1, sender.aborts.get());
        assertEquals(0, word(b.heapAt(256)), "nothing landed");
    }

    @Test
    void aRangeBeyondThePeersRegistrationGivesAnErrorCqeNamingThePeer() {
        // The sender believes in a heap twice the size B registered and published; B's NIC (the responder here)
        // checks the range against B's registration, not against what the sender believes.
        VerbsLink g = a.connect(b);
        VerbsLink tooLong = new VerbsLink(0, 1, g.peerDescription(), g.poster(), g.localHeap(), g.localLkey(),
                g.peerHeap(), g.peerRkey(), 2L * HEAP, g.fetchAddress(), g.fetchLkey(), false, g.localCredits(),
                g.peerCredits(), g.peerCreditsRkey());
        VerbsTestChannel sender = new VerbsTestChannel(tooLong, 8, LONG_CREDIT_TIMEOUT);
        VerbsTestChannel receiver = new VerbsTestChannel(b.connect(a), 8, LONG_CREDIT_TIMEOUT);
        a.service.add(sender.channel, 0);
        b.service.add(receiver.channel, 0);
        sender.put(HEAP - 64, 0, 64);
        sender.flushAndWait(); // inside B's registration: fine
        sender.signal(KIND_ATOMIC_ADD, SIGNAL_OP_ADD, HEAP + 8, 1);
        ErrorRecord record = sender.awaitRecord();
        assertEquals(Op.ATOMIC_ADD, record.op());
        assertEquals(1, record.peer());
        assertEquals(EmulatedFault.REMOTE_OUT_OF_RANGE.vendorSyndrome(), (int) (record.seen() >>> 8 & 0xff));
        String problem = sender.channel.problem().orElseThrow();
        assertTrue(problem.contains("ATOMIC_ADD") && problem.contains("toward " + b.description), problem);
        assertTrue(a.nic.faults().get(a.nic.faults().size() - 1).contains(b.description + " heap"),
                a.nic.faults().toString());
    }

    @Test
    void aPeerThatWentAwayIsNamed() {
        VerbsTestChannel ab = new VerbsTestChannel(a.connect(b), 8, LONG_CREDIT_TIMEOUT);
        VerbsTestChannel ba = new VerbsTestChannel(b.connect(a), 8, LONG_CREDIT_TIMEOUT);
        a.service.add(ab.channel, 0);
        b.service.add(ba.channel, 0);
        ab.put(0, 0, 8);
        ab.flushAndWait();
        a.session.responder(0, 1).close(); // B's NIC no longer answers A's QP
        ab.putSignal(64, 0, 64, SIGNAL_OP_SET, 128, 1);
        ErrorRecord record = ab.awaitRecord();
        assertEquals(1, record.peer());
        assertEquals(Op.PUT_SIGNAL, record.op());
        assertEquals(CqeSyndrome.TRANSPORT_RETRY_EXC.code(), (int) (record.seen() & 0xff));
        String problem = ab.channel.problem().orElseThrow();
        assertTrue(problem.contains("toward " + b.description) && problem.contains("Rank 1's NIC stopped answering"),
                problem);
        assertEquals(0, word(b.heapAt(128)), "the signal did not land");
    }

    @Test
    void anOfferThatDoesNotDescribeThisWorldIsRefusedNamingThePeer() {
        VerbsOffer offerOfB = VerbsOffer.decode(b.description, b.published);
        CrossProcessMemory.Opened mapping = memory.open(b.heap.handle(), HEAP, "B's heap");
        a.mappings.add(mapping);
        ProxyException heap = assertThrows(ProxyException.class, () -> a.session.connectAcrossProcesses(0, null, 1,
                b.description, mapping.address(), 2L * HEAP, offerOfB));
        assertTrue(heap.getMessage().startsWith(b.description) && heap.getMessage().contains(HEAP + " bytes"),
                heap.getMessage());
        VerbsOffer ofThree = new VerbsOffer(offerOfB.heapRkey(), offerOfB.heapAddress(), HEAP,
                offerOfB.heapAccess(), offerOfB.creditsRkey(), offerOfB.creditsAddress(), 3, offerOfB.creditsHandle(),
                offerOfB.lockHandle());
        ProxyException world = assertThrows(ProxyException.class, () -> a.session.connectAcrossProcesses(0, null, 1,
                b.description, mapping.address(), HEAP, ofThree));
        assertTrue(world.getMessage().contains("do not describe one world"), world.getMessage());
        ProxyException self = assertThrows(ProxyException.class, () -> a.session.connectAcrossProcesses(0, null, 0,
                b.description, mapping.address(), HEAP, offerOfB));
        assertTrue(self.getMessage().contains("do not describe one world"), self.getMessage());
        // Nothing was left half made: the real connection still works.
        a.connect(b);
    }

    @Test
    void aPeerWhoseProcessClosedItsMemoryCannotBeConnected() {
        b.session.close(); // B's credit blocks and lock line are no longer lent
        ProxyException e = assertThrows(ProxyException.class, () -> a.connect(b));
        assertTrue(e.getMessage().contains(b.description + "'s credit blocks"), e.getMessage());
    }

    @Test
    void aSessionOfOneProcessOffersNothingAcrossProcesses() {
        try (VerbsSession local = new VerbsSession(a.nic, bytes -> {
            throw new AssertionError("not reached");
        }, 64)) {
            local.registerHeap(0, null, a.heap.address(), HEAP, MemoryKind.DEVICE);
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> local.offerAcrossProcesses(0, 2));
            assertTrue(e.getMessage().contains("one process only"), e.getMessage());
        }
        IllegalStateException early = assertThrows(IllegalStateException.class, () -> {
            try (VerbsSession fresh = new VerbsSession(a.nic, bytes -> null, 64, memory, memory)) {
                fresh.registerHeap(0, null, a.heap.address(), HEAP, MemoryKind.DEVICE);
                fresh.connectAcrossProcesses(0, null, 1, b.description, 0, HEAP,
                        VerbsOffer.decode(b.description, b.published));
            }
        });
        assertTrue(early.getMessage().contains("before it offered"), early.getMessage());
    }
}

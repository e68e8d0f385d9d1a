package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.nic.HostPoster;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.QpState;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A QP of one emulated NIC connected to a responder of "another process" ({@link RemoteResponder}) on host memory:
 * NIC B stands for the responder's process (it registers the heap and makes the key), NIC A for the requester's,
 * whose engine acts on B's heap through a "mapping" at another address than B's own (the CUDA IPC mapping). WQEs name
 * B's addresses and key, as on the wire; they must land at the mapping, be checked against B's registration and not
 * A's, fail as within one process when the key or range is wrong, and run atomics under B's lock line.
 */
class EmulatedNicAcrossProcessesTest {
    static final long TIMEOUT = TimeUnit.SECONDS.toNanos(10);
    static final int REGION = 4096;
    /** Where B's process addresses its heap: no memory of this process (the test would crash if it were touched). */
    static final long OWNER_VA = 0x7f00_0000_0000L;
    static final long LOCK = 0x7f10_0000_0000L;

    HostMemoryPlatform platform;
    EmulatedNic nicA;
    EmulatedNic nicB;
    long localA;
    long mapped;
    NicMemory memA;
    NicMemory heapB;
    RemoteResponder responder;
    NicQp qp;
    HostPoster poster;

    @BeforeEach
    void open() {
        platform = new HostMemoryPlatform();
        EmulatedNicConfig strict = new EmulatedNicConfig("backoff", false, true, false, true, 0); // retry time 0
        nicA = new EmulatedNic(platform, strict);
        nicB = new EmulatedNic(platform, strict);
        localA = platform.allocate(REGION);
        mapped = platform.allocate(REGION);
        platform.allowWrites(localA, REGION);
        platform.allowWrites(mapped, REGION);
        memA = nicA.registerMemory(new MemoryRegistration(null, localA, REGION, MemoryKind.DEVICE, NicAccess.HEAP,
                "A"));
        heapB = nicB.registerMemory(new MemoryRegistration(null, OWNER_VA, REGION, MemoryKind.DEVICE, NicAccess.HEAP,
                "B"));
        responder = new RemoteResponder("rank 1 (pid 7 on h)");
        responder.addRegion(heapB.rkey(), OWNER_VA, REGION, heapB.access(), mapped, LOCK, "heap");
        qp = nicA.createQpToProcess(QpSpec.of(null, 64, "rank 0 -> rank 1"), responder);
        poster = qp.hostPoster();
    }

    @AfterEach
    void close() {
        qp.close();
        nicA.close();
        nicB.close();
        assertTrue(platform.violations.isEmpty(), platform.violations.toString());
    }

    void complete() throws TimeoutException {
        poster.ring();
        for (int i = 0; i < 10_000 && poster.retiredIndex() < poster.producerIndex(); i++) {
            nicA.engine().doWork();
            poster.poll();
        }
        poster.quiet(TIMEOUT);
    }

    CompletionErrorException fault() {
        CompletionErrorException e = assertThrows(CompletionErrorException.class, this::complete);
        assertEquals(QpState.ERROR, qp.state());
        return e;
    }

    @Test
    void writesReadsAndInlineWritesNameTheRespondersAddressesAndLandInTheMapping() throws TimeoutException {
        assertEquals(QpState.RTS, qp.state(), "connected to the responder at once");
        byte[] payload = new byte[256];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 7 + 1);
        }
        new Pointer(localA).write(0, payload, 0, payload.length);
        poster.postWrite(OWNER_VA + 512, heapB.rkey(), localA, memA.lkey(), payload.length, TIMEOUT);
        poster.postWriteInline(OWNER_VA + 1024, heapB.rkey(), new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, TIMEOUT);
        complete();
        assertArrayEquals(payload, new Pointer(mapped).getByteArray(512, payload.length), "WRITE at B's address "
                + "lands in the mapping of B's heap");
        assertEquals(0x0807060504030201L, new Pointer(mapped).getLong(1024), "inline WRITE too");
        poster.postRead(OWNER_VA + 512, heapB.rkey(), localA + 2048, memA.lkey(), payload.length, TIMEOUT);
        complete();
        assertArrayEquals(payload, new Pointer(localA).getByteArray(2048, payload.length), "READ from the mapping");
    }

    @Test
    void atomicsRunUnderTheRespondersLockLine() throws TimeoutException {
        for (int i = 0; i < 5; i++) {
            poster.postFetchAdd(OWNER_VA + 8, heapB.rkey(), 3, localA, memA.lkey(), TIMEOUT);
        }
        complete();
        assertEquals(15, new Pointer(mapped).getLong(8));
        assertEquals(12, new Pointer(localA).getLong(0), "the last fetched value");
        assertEquals(5, platform.lockedAtomics, "every strict atomic on another process's heap takes its lock");
        assertEquals(LOCK, platform.lastLock);
    }

    @Test
    void theRespondersOwnAtomicsTakeTheSameLockOnceSerialised() throws TimeoutException {
        long heap = platform.allocate(REGION);
        platform.allowWrites(heap, REGION);
        NicMemory own = nicB.registerMemory(new MemoryRegistration(null, heap, REGION, MemoryKind.DEVICE,
                NicAccess.HEAP, "B's own heap"));
        nicB.serializeAtomics(own, LOCK);
        NicQp loopback = nicB.createLoopbackQp(QpSpec.of(null, 64, "rank 1 loopback"));
        try {
            HostPoster p = loopback.hostPoster();
            p.postFetchAdd(heap, own.rkey(), 1, 0, nicB.nullMemory().lkey(), TIMEOUT);
            p.ring();
            for (int i = 0; i < 10_000 && p.retiredIndex() < p.producerIndex(); i++) {
                nicB.engine().doWork();
                p.poll();
            }
            p.quiet(TIMEOUT);
            assertEquals(1, new Pointer(heap).getLong(0));
            assertEquals(1, platform.lockedAtomics);
            assertEquals(LOCK, platform.lastLock);
        } finally {
            loopback.close();
        }
        assertThrows(IllegalArgumentException.class, () -> nicA.serializeAtomics(own, LOCK),
                "a region of another NIC");
        assertThrows(IllegalArgumentException.class, () -> nicB.serializeAtomics(own, LOCK + 4), "misaligned lock");
    }

    @Test
    void aKeyOfTheRequestersOwnNicIsUnknownToTheResponder() throws TimeoutException {
        // Both NICs number keys alike (A's heap and B's heap have the same key): a second region of A has a key that
        // is valid in A's table and that B never made, so only a lookup in B's table refuses it.
        NicMemory second = nicA.registerMemory(new MemoryRegistration(null, localA, REGION, MemoryKind.DEVICE,
                NicAccess.HEAP, "A again"));
        poster.postWriteInline(OWNER_VA, second.rkey(), new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, TIMEOUT);
        CompletionErrorException e = fault();
        assertEquals(CqeSyndrome.REMOTE_ACCESS, e.syndrome(), e.getMessage());
        assertEquals(EmulatedFault.UNKNOWN_RKEY.vendorSyndrome(), e.cqe().vendorSyndrome());
        assertEquals(0, new Pointer(mapped).getLong(0));
    }

    @Test
    void aRangeOutsideTheRespondersRegionIsARemoteAccessError() throws TimeoutException {
        poster.postWrite(OWNER_VA + REGION - 8, heapB.rkey(), localA, memA.lkey(), 16, TIMEOUT);
        CompletionErrorException e = fault();
        assertEquals(CqeSyndrome.REMOTE_ACCESS, e.syndrome(), e.getMessage());
        assertEquals(EmulatedFault.REMOTE_OUT_OF_RANGE.vendorSyndrome(), e.cqe().vendorSyndrome());
        assertTrue(nicA.faults().get(nicA.faults().size() - 1).contains("rank 1 (pid 7 on h) heap"),
                nicA.faults().toString());
    }

    @Test
    void aMissingRightIsARemoteAccessError() throws TimeoutException {
        RemoteResponder readOnly = new RemoteResponder("rank 2");
        readOnly.addRegion(heapB.rkey(), OWNER_VA, REGION, Set.of(NicAccess.REMOTE_READ), mapped, LOCK, "heap");
        NicQp other = nicA.createQpToProcess(QpSpec.of(null, 64, "rank 0 -> rank 2"), readOnly);
        try {
            HostPoster p = other.hostPoster();
            p.postFetchAdd(OWNER_VA, heapB.rkey(), 1, 0, nicA.nullMemory().lkey(), TIMEOUT);
            p.ring();
            nicA.engine().doWork();
            CompletionErrorException e = assertThrows(CompletionErrorException.class, p::poll);
            assertEquals(CqeSyndrome.REMOTE_ACCESS, e.syndrome());
            assertEquals(EmulatedFault.REMOTE_NO_ACCESS.vendorSyndrome(), e.cqe().vendorSyndrome());
            assertEquals(0, new Pointer(mapped).getLong(0));
        } finally {
            other.close();
        }
    }

    @Test
    void aClosedResponderIsUnreachable() throws TimeoutException {
        responder.close();
        poster.postWrite(OWNER_VA, heapB.rkey(), localA, memA.lkey(), 8, TIMEOUT);
        CompletionErrorException e = fault();
        assertEquals(CqeSyndrome.TRANSPORT_RETRY_EXC, e.syndrome(), e.getMessage());
    }

    @Test
    void foreignKeysAreCheckedWhenEntered() {
        RemoteResponder r = new RemoteResponder("rank 3");
        assertThrows(io.gda4j.nic.NicException.class, () -> r.addRegion(0x42, OWNER_VA, REGION, NicAccess.HEAP,
                mapped, 0, "slot 0"));
        r.addRegion(heapB.rkey(), OWNER_VA, REGION, NicAccess.HEAP, mapped, 0, "heap");
        assertThrows(io.gda4j.nic.NicException.class, () -> r.addRegion(heapB.rkey(), OWNER_VA, REGION,
                NicAccess.HEAP, mapped, 0, "again"));
    }
}

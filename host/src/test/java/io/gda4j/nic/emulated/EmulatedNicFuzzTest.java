package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.CqDoorbellRecordDescriptor;
import io.gda4j.mlx5.CqeDecoder;
import io.gda4j.mlx5.CqeOpcode;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.mlx5.WqeEncoder;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Random;

/**
 * The emulated NIC's decoder and engine fed garbage: random bytes, and valid WQEs with random bytes flipped. The
 * engine must never throw, every completion of pure garbage must be an error CQE, and nothing may be written outside
 * the registered regions (the {@link HostMemoryPlatform} checks every write; canaries around the regions check
 * again).
 */
class EmulatedNicFuzzTest {
    static final int REGION = 1024;
    static final int CANARY = 256;
    static final byte CANARY_BYTE = (byte) 0xa5;
    static final int SQ = 64;

    HostMemoryPlatform platform = new HostMemoryPlatform();
    EmulatedNic nic = new EmulatedNic(platform, new EmulatedNicConfig("backoff", false));
    long[] regions = new long[3];
    NicMemory[] mems = new NicMemory[3];

    EmulatedNicFuzzTest() {
        for (int i = 0; i < regions.length; i++) {
            long block = platform.allocate(REGION + 2 * CANARY);
            new Pointer(block).setMemory(0, REGION + 2 * CANARY, CANARY_BYTE);
            regions[i] = block + CANARY;
            platform.allowWrites(regions[i], REGION);
            mems[i] = nic.registerMemory(new MemoryRegistration(null, regions[i], REGION, MemoryKind.DEVICE,
                    i == 2 ? EnumSet.of(NicAccess.REMOTE_READ) : NicAccess.HEAP, "region " + i));
        }
    }

    void checkCanaries() {
        for (long r : regions) {
            byte[] before = new Pointer(r - CANARY).getByteArray(0, CANARY);
            byte[] after = new Pointer(r + REGION).getByteArray(0, CANARY);
            byte[] expected = new byte[CANARY];
            Arrays.fill(expected, CANARY_BYTE);
            assertTrue(Arrays.equals(expected, before) && Arrays.equals(expected, after), "a canary was overwritten");
        }
    }

    /** Rings {@code count} WQEBBs of whatever is in the ring, runs the engine, returns the CQEs it wrote. */
    DecodedCqe[] run(NicQp qp, long count) {
        QpRings r = qp.hostRings();
        ByteBuffer dbr = new Pointer(r.dbrec()).getByteBuffer(0, 8);
        ByteBuffer cq = new Pointer(r.cqBuf()).getByteBuffer(0, (long) r.cqeCount() * 64);
        DoorbellRecordDescriptor.putSendCounterRelease(dbr, 0, count);
        DoorbellDescriptor.putDoorbellRelease(new Pointer(r.doorbell()).getByteBuffer(0, 8), 0, count, r.qpn());
        for (int i = 0; i < 8; i++) {
            nic.engine().doWork(); // must never throw
        }
        DecodedCqe[] out = new DecodedCqe[r.cqeCount()];
        int n = 0;
        while (n < out.length && CqeDecoder.poll(cq, n) != CqeDecoder.EMPTY) {
            out[n] = CqeDecoder.decode(cq, n);
            n++;
        }
        CqDoorbellRecordDescriptor.putConsumerIndexRelease(new Pointer(r.cqDbrec()).getByteBuffer(0, 8), 0, n);
        return Arrays.copyOf(out, n);
    }

    @Test
    void randomBytesOnlyEverGiveErrorCqes() {
        Random random = new Random(42);
        int cqes = 0;
        try {
            for (int round = 0; round < 300; round++) {
                NicQp qp = nic.createLoopbackQp(QpSpec.of(null, SQ, "fuzz " + round));
                QpRings r = qp.hostRings();
                byte[] garbage = new byte[SQ * 64];
                random.nextBytes(garbage);
                new Pointer(r.sqBuf()).write(0, garbage, 0, garbage.length);
                for (DecodedCqe cqe : run(qp, 1 + random.nextInt(SQ))) {
                    assertTrue(cqe.isError(), "garbage completed successfully: " + cqe);
                    assertEquals(CqeOpcode.REQ_ERR, cqe.cqeOpcode());
                    assertTrue(CqeSyndrome.fromCode(cqe.syndrome()) != null, cqe.toString());
                    cqes++;
                }
                qp.close();
                checkCanaries();
            }
        } finally {
            nic.close();
        }
        assertTrue(cqes >= 300, "each round fails at least its first WQE, got " + cqes + " CQEs");
        assertTrue(platform.violations.isEmpty(), platform.violations.toString());
    }

    @Test
    void mutatedValidWqesStayInsideRegisteredMemory() {
        Random random = new Random(7);
        int successes = 0;
        int errors = 0;
        try {
            for (int round = 0; round < 400; round++) {
                NicQp qp = nic.createLoopbackQp(QpSpec.of(null, SQ, "mutate " + round));
                QpRings r = qp.hostRings();
                ByteBuffer sq = new Pointer(r.sqBuf()).getByteBuffer(0, (long) SQ * 64);
                long at = 0;
                int wqes = 1 + random.nextInt(20);
                for (int w = 0; w < wqes; w++) {
                    at += writeRandomValidWqe(sq, at, r.qpn(), random);
                }
                int flips = random.nextInt(6);
                for (int f = 0; f < flips; f++) {
                    int pos = random.nextInt((int) Math.min(at, SQ) * 64);
                    sq.put(pos, (byte) (sq.get(pos) ^ (1 << random.nextInt(8))));
                }
                for (DecodedCqe cqe : run(qp, at)) {
                    if (cqe.isError()) {
                        errors++;
                    } else {
                        successes++;
                    }
                }
                qp.close();
                checkCanaries();
            }
        } finally {
            nic.close();
        }
        assertTrue(successes > 100 && errors > 100, successes + " successes, " + errors + " errors");
        assertTrue(platform.violations.isEmpty(), platform.violations.toString());
    }

    /** A valid WQE with random but in-bounds operands; returns its WQEBBs. */
    int writeRandomValidWqe(ByteBuffer sq, long at, int qpn, Random random) {
        int fm = WqeDescriptor.FM_CE_SE_CQ_UPDATE;
        int src = random.nextInt(3);
        int dst = random.nextInt(2);
        int len = 1 + random.nextInt(64);
        long local = regions[src] + random.nextInt(REGION - 64);
        long remote = regions[dst] + (random.nextInt(REGION - 64) & ~7);
        switch (random.nextInt(5)) {
            case 0:
                return WqeEncoder.writeRdmaWrite(sq, at, qpn, fm, remote, mems[dst].rkey(), local, mems[src].lkey(), len);
            case 1:
                return WqeEncoder.writeRdmaRead(sq, at, qpn, fm, regions[src] + random.nextInt(REGION - 64),
                        mems[src].rkey(), regions[dst] + random.nextInt(REGION - 64), mems[dst].lkey(), len);
            case 2:
                byte[] payload = new byte[random.nextInt(100)];
                random.nextBytes(payload);
                return WqeEncoder.writeRdmaWriteInline(sq, at, qpn, fm, remote, mems[dst].rkey(), payload, 0,
                        payload.length);
            case 3:
                return WqeEncoder.writeAtomicFetchAdd(sq, at, qpn, fm, remote, mems[dst].rkey(), random.nextLong(),
                        regions[dst] + (random.nextInt(REGION - 8) & ~7), mems[dst].lkey());
            default:
                return WqeEncoder.writeNop(sq, at, qpn, fm);
        }
    }
}

package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.CqDoorbellRecordDescriptor;
import io.gda4j.mlx5.CqeDecoder;
import io.gda4j.mlx5.CqeDescriptor;
import io.gda4j.mlx5.CqeOpcode;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The GPU posting protocol of {@code gda4j/transport/ibgda/qp.cuh}, transcribed step for step into Java threads and run
 * against the emulated NIC's engine on host memory: many posters reserving slots at once, publishing in reservation
 * order, ringing under the doorbell lock, one poller at a time retiring slots from CQEs through the wqe_sizes table. A
 * lost, duplicated or overwritten WQE shows up: an overwritten slot carries a later WQE index, which the engine rejects
 * (WQE_INDEX_MISMATCH), and the atomic sum would be off. Waits yield instead of spinning: unlike warps, these
 * threads outnumber the cores, and a preempted thread holding the next reservation would stall everyone.
 */
class DevicePostingProtocolTest {
    /** transport/ibgda/qp.cuh's DeviceQp state and functions, in Java. */
    static final class Poster {
        final ByteBuffer sq;
        final ByteBuffer dbrec;
        final ByteBuffer doorbell;
        final ByteBuffer cq;
        final ByteBuffer cqDbrec;
        final int depth;
        final int qpn;
        final byte[] wqeSizes;
        final AtomicLong resvHead = new AtomicLong();
        final AtomicLong readyHead = new AtomicLong();
        long prodIdx; // under dbLock
        final AtomicInteger dbLock = new AtomicInteger();
        volatile long consHead;
        long cqCi; // under pollLock
        final AtomicInteger pollLock = new AtomicInteger();

        Poster(QpRings r) {
            sq = new Pointer(r.sqBuf()).getByteBuffer(0, (long) r.sqWqebbs() * 64);
            dbrec = new Pointer(r.dbrec()).getByteBuffer(0, 8);
            doorbell = new Pointer(r.doorbell()).getByteBuffer(0, 8);
            cq = new Pointer(r.cqBuf()).getByteBuffer(0, (long) r.cqeCount() * CqeDescriptor.CQE_SIZE);
            cqDbrec = new Pointer(r.cqDbrec()).getByteBuffer(0, 8);
            depth = r.sqWqebbs();
            qpn = r.qpn();
            wqeSizes = new byte[depth];
        }

        /** reserve(): atomicAdd, then wait (polling) until the slots are retired. */
        long reserve(int n) {
            long base = resvHead.getAndAdd(n);
            while (base + n > depth && consHead < base + n - depth) {
                pollCq();
                Thread.yield(); // more posters than cores here: a preempted reservation holder must get to run
            }
            return base;
        }

        /** publish(): in reservation order (CAS from base), then ring(). */
        void publish(long base, int n) {
            while (!readyHead.compareAndSet(base, base + n)) {
                Thread.yield(); // more posters than cores here: a preempted reservation holder must get to run
            }
            ring();
        }

        /** ring(): under the doorbell lock, raise the producer index, store the DBR (release), then the doorbell. */
        void ring() {
            while (!dbLock.compareAndSet(0, 1)) {
                Thread.yield(); // more posters than cores here: a preempted reservation holder must get to run
            }
            long pi = readyHead.get();
            if (pi > prodIdx) {
                prodIdx = pi;
                DoorbellRecordDescriptor.putSendCounterRelease(dbrec, 0, pi);
                DoorbellDescriptor.putDoorbellRelease(doorbell, 0, pi, qpn);
            }
            dbLock.set(0);
        }

        /** poll_cq(): one poller; retire each CQE's WQE by its size; consumer index before cons_head. */
        void pollCq() {
            if (!pollLock.compareAndSet(0, 1)) {
                return;
            }
            try {
                long ci = cqCi;
                long cons = consHead;
                long start = ci;
                while (CqeDecoder.poll(cq, ci) != CqeDecoder.EMPTY) {
                    var cqe = CqeDecoder.decode(cq, ci);
                    if (cqe.cqeOpcode() != CqeOpcode.REQ) {
                        throw new CompletionErrorException(cqe);
                    }
                    long wqe = cons + ((cqe.wqeCounter() - (int) cons) & 0xffff);
                    int size = wqeSizes[(int) (wqe & (depth - 1))];
                    cons = wqe + (size != 0 ? size : 1);
                    ci++;
                }
                if (ci != start) {
                    CqDoorbellRecordDescriptor.putConsumerIndexRelease(cqDbrec, 0, ci);
                    cqCi = ci;
                    consHead = cons;
                }
            } finally {
                pollLock.set(0);
            }
        }

        void quiet() {
            long target = readyHead.get();
            while (consHead < target) {
                pollCq();
                Thread.yield(); // more posters than cores here: a preempted reservation holder must get to run
            }
        }
    }

    @Test
    void manyPostersOnOneSmallQueueLoseNothingAndOverwriteNothing() throws Exception {
        HostMemoryPlatform platform = new HostMemoryPlatform();
        EmulatedNic nic = new EmulatedNic(platform, new EmulatedNicConfig("spin", true));
        try {
            long heap = platform.allocate(4096);
            platform.allowWrites(heap, 4096);
            NicMemory mem = nic.registerMemory(new MemoryRegistration(null, heap, 4096, MemoryKind.DEVICE,
                    NicAccess.HEAP, "heap"));
            NicQp qp = nic.createLoopbackQp(QpSpec.of(null, 32, "protocol"));
            Poster p = new Poster(qp.hostRings());
            int threads = 4;
            int perThread = Integer.getInteger("protocol.perThread", 4_000); // 16,000 WQEs, 625 laps of the ring; -Dprotocol.perThread=20000 passes 2^16
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> workers = new ArrayList<>();
            java.util.concurrent.atomic.AtomicLongArray where = new java.util.concurrent.atomic.AtomicLongArray(threads * 2);
            for (int t = 0; t < threads; t++) {
                final int id = t;
                Thread w = new Thread(() -> {
                    try {
                        for (int i = 0; i < perThread; i++) {
                            // Alternate 1-WQEBB atomics and 2-WQEBB inline writes, so sizes matter.
                            if ((i & 3) == 3) {
                                byte[] payload = new byte[40];
                                payload[0] = (byte) id;
                                int n = WqeDescriptor.wqebbsForDs(WqeDescriptor.inlineDs(payload.length));
                                where.set(2 * id, 1);
                                long base = p.reserve(n);
                                where.set(2 * id, 2);
                                where.set(2 * id + 1, base);
                                WqeEncoder.writeRdmaWriteInline(p.sq, base, p.qpn, WqeDescriptor.FM_CE_SE_CQ_UPDATE,
                                        heap + 1024 + 64L * id, mem.rkey(), payload, 0, payload.length);
                                p.wqeSizes[(int) (base & (p.depth - 1))] = (byte) n;
                                p.publish(base, n);
                            } else {
                                where.set(2 * id, 3);
                                long base = p.reserve(1);
                                where.set(2 * id, 4);
                                where.set(2 * id + 1, base);
                                WqeEncoder.writeAtomicFetchAdd(p.sq, base, p.qpn, WqeDescriptor.FM_CE_SE_CQ_UPDATE,
                                        heap, mem.rkey(), 1, heap + 64 + 8L * id, mem.lkey());
                                p.wqeSizes[(int) (base & (p.depth - 1))] = 1;
                                p.publish(base, 1);
                            }
                        }
                        where.set(2 * id, 5);
                        p.quiet();
                        where.set(2 * id, 6);
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "poster-" + t);
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                w.join(60_000);
                assertTrue(!w.isAlive(), () -> "a poster is stuck: resv " + p.resvHead + " ready " + p.readyHead
                        + " prod " + p.prodIdx + " cons " + p.consHead + " cq_ci " + p.cqCi + " engine consumed "
                        + ((EmulatedQp) qp).consumed + " cqProducer " + ((EmulatedQp) qp).cqProducer + " stats "
                        + nic.stats() + " faults " + nic.faults() + " failure " + failure.get() + " where " + where);
            }
            if (failure.get() != null) {
                throw new AssertionError("poster failed; NIC faults: " + nic.faults(), failure.get());
            }
            long atomics = (long) threads * (perThread - perThread / 4);
            assertEquals(atomics, new Pointer(heap).getLong(0), "every atomic ran exactly once");
            assertEquals(0, nic.stats().errors(), nic.faults().toString());
            assertTrue(platform.violations.isEmpty(), platform.violations.toString());
        } finally {
            nic.close();
        }
    }
}

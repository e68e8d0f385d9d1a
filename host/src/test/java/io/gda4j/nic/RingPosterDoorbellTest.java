package io.gda4j.nic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import io.gda4j.mlx5.CqeDescriptor;
import io.gda4j.mlx5.CqeOpcode;
import io.gda4j.mlx5.DecodedWqe;
import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.mlx5.WqeDecoder;
import io.gda4j.mlx5.WqeDescriptor;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link RingPoster#ring()} runs rdma-core's three doorbell barriers, each in its place: a recording
 * {@link RingPoster.DoorbellBarriers} notes, at every barrier, what the doorbell record and the doorbell register
 * hold then. Dropping a barrier (the write-combining flush after the doorbell, or the one before the doorbell record)
 * or moving it past its store fails here. No NIC: the rings are plain host memory that nothing executes.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RingPosterDoorbellTest {
    static final long TIMEOUT = TimeUnit.SECONDS.toNanos(5);
    static final int QPN = 0x00abcd;
    static final int SQ_WQEBBS = 8;

    /** What one barrier call saw: which barrier, the published send counter, the doorbell register's value. */
    record Seen(String barrier, int sendCounter, long doorbell, boolean lastWqeWritten) {
    }

    /** Rings in host memory, nothing executing them: a QP in RTS as far as the poster can tell. */
    static class HostMemoryQp implements NicQp {
        final Memory block = new Memory(SQ_WQEBBS * 64L + SQ_WQEBBS * 64L + 4 * 64L + 64);
        final long base = Pointer.nativeValue(block.align(64));
        final QpRings rings = new QpRings(QPN, base, SQ_WQEBBS, base + SQ_WQEBBS * 64L, base + SQ_WQEBBS * 64L + 64,
                DoorbellKind.MEMORY, base + SQ_WQEBBS * 64L + 128, SQ_WQEBBS, base + SQ_WQEBBS * 128L + 128, 256);

        HostMemoryQp() {
            block.clear();
            ByteBuffer cq = new Pointer(rings.cqBuf()).getByteBuffer(0, SQ_WQEBBS * 64L);
            for (int i = 0; i < SQ_WQEBBS; i++) { // INVALID CQEs, hardware-owned: nothing to consume
                cq.put(i * 64 + CqeDescriptor.OP_OWN_OFFSET, (byte) (CqeOpcode.INVALID << 4));
            }
        }

        ByteBuffer sq() {
            return new Pointer(rings.sqBuf()).getByteBuffer(0, SQ_WQEBBS * 64L);
        }

        int sendCounter() {
            return DoorbellRecordDescriptor.getSendCounterAcquire(
                    new Pointer(rings.dbrec()).getByteBuffer(0, DoorbellRecordDescriptor.SIZE), 0);
        }

        long doorbell() {
            return DoorbellDescriptor.getDoorbellAcquire(
                    new Pointer(rings.doorbell()).getByteBuffer(0, DoorbellDescriptor.SIZE), 0);
        }

        @Override
        public int qpn() {
            return QPN;
        }

        @Override
        public String label() {
            return "host memory";
        }

        @Override
        public Nic nic() {
            throw new UnsupportedOperationException("no NIC behind these rings");
        }

        @Override
        public QpAddress address() {
            throw new UnsupportedOperationException("no NIC behind these rings");
        }

        @Override
        public void connect(QpAddress peer) {
            throw new UnsupportedOperationException("no NIC behind these rings");
        }

        @Override
        public QpState state() {
            return QpState.RTS;
        }

        @Override
        public QpRings deviceRings() {
            return rings;
        }

        @Override
        public QpRings hostRings() {
            return rings;
        }

        @Override
        public void close() {
            // the memory goes with the object
        }
    }

    /** Records each barrier with what the rings hold at that moment. */
    static final class RecordingBarriers implements RingPoster.DoorbellBarriers {
        final HostMemoryQp qp;
        final List<Seen> seen = new ArrayList<>();
        long lastWqe;

        RecordingBarriers(HostMemoryQp qp) {
            this.qp = qp;
        }

        private void note(String barrier) {
            DecodedWqe wqe = WqeDecoder.decode(qp.sq(), lastWqe, QPN);
            seen.add(new Seen(barrier, qp.sendCounter(), qp.doorbell(),
                    wqe.ok() && wqe.wqeIndex() == (int) (lastWqe & WqeDescriptor.WQE_INDEX_MASK)));
        }

        @Override
        public void toDevice() {
            note("toDevice");
        }

        @Override
        public void beforeWriteCombining() {
            note("beforeWriteCombining");
        }

        @Override
        public void flushWriteCombining() {
            note("flushWriteCombining");
        }

        @Override
        public String description() {
            return "recording";
        }
    }

    @Test
    void ringRunsEachBarrierInItsPlace() throws TimeoutException {
        HostMemoryQp qp = new HostMemoryQp();
        RecordingBarriers barriers = new RecordingBarriers(qp);
        RingPoster poster = new RingPoster(qp, barriers);
        poster.postNop(TIMEOUT);
        barriers.lastWqe = poster.postWriteInline(0x1000, 7, new byte[40], TIMEOUT); // 2 WQEBBs: counter 1 -> 3
        assertEquals(List.of(), barriers.seen, "posting alone rings nothing");

        poster.ring();
        long rung = DoorbellDescriptor.doorbellBigEndian(3, QPN);
        assertEquals(List.of(
                // udma_to_device_barrier: the WQEs are written, the record does not cover them yet
                new Seen("toDevice", 0, 0, true),
                // mmio_wc_start: the record covers them, the doorbell is not yet stored
                new Seen("beforeWriteCombining", 3, 0, true),
                // mmio_flush_writes: after the doorbell store
                new Seen("flushWriteCombining", 3, rung, true)), barriers.seen);
    }

    @Test
    void everyRingWithNewWorkRunsAllThreeAndARingWithNoneRunsNone() throws TimeoutException {
        HostMemoryQp qp = new HostMemoryQp();
        RecordingBarriers barriers = new RecordingBarriers(qp);
        RingPoster poster = new RingPoster(qp, barriers);
        barriers.lastWqe = poster.postNop(TIMEOUT);
        poster.ring();
        poster.ring(); // nothing new: no doorbell, no barrier
        assertEquals(3, barriers.seen.size(), barriers.seen::toString);

        barriers.lastWqe = poster.postWrite(0x2000, 7, 0x3000, 8, 64, TIMEOUT);
        poster.ring();
        assertEquals(List.of("toDevice", "beforeWriteCombining", "flushWriteCombining", "toDevice",
                "beforeWriteCombining", "flushWriteCombining"), barriers.seen.stream().map(Seen::barrier).toList());
        Seen flush = barriers.seen.get(5);
        assertEquals(new Seen("flushWriteCombining", 2, DoorbellDescriptor.doorbellBigEndian(2, QPN), true), flush);
        DecodedWqe write = WqeDecoder.decode(qp.sq(), 1, QPN);
        assertEquals(Mlx5Opcode.RDMA_WRITE, write.opcode());
    }

    @Test
    void aRealNicsWriteCombiningDoorbellIsRefused() {
        HostMemoryQp qp = new HostMemoryQp();
        QpRings r = qp.rings;
        NicQp mmio = new HostMemoryQp() {
            @Override
            public QpRings hostRings() {
                return new QpRings(r.qpn(), r.sqBuf(), r.sqWqebbs(), r.dbrec(), r.doorbell(), DoorbellKind.MMIO,
                        r.cqBuf(), r.cqeCount(), r.cqDbrec(), r.maxInlineBytes());
            }
        };
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RingPoster(mmio));
        assertTrue(e.getMessage().contains("libibverbs"), e.getMessage());
    }

    @Test
    void aPosterUsesTheBarriersOfThisCpu() {
        RingPoster poster = (RingPoster) new HostMemoryQp().hostPoster();
        assertSame(RingPoster.DoorbellBarriers.forThisCpu(), poster.barriers());
    }

    @Test
    void x86FencesDrainWriteCombiningAndWeaklyOrderedCpusUseFullFences() {
        RingPoster.DoorbellBarriers x86 = RingPoster.DoorbellBarriers.forArchitecture("amd64");
        assertSame(x86, RingPoster.DoorbellBarriers.forArchitecture("x86_64"));
        assertTrue(x86.description().contains("drains write-combining"), x86.description());
        RingPoster.DoorbellBarriers arm = RingPoster.DoorbellBarriers.forArchitecture("aarch64");
        assertTrue(arm.description().contains("full fence") && arm.description().contains("libibverbs"),
                arm.description());
        // The fences run without failing on this CPU.
        x86.toDevice();
        x86.beforeWriteCombining();
        x86.flushWriteCombining();
        arm.toDevice();
        arm.beforeWriteCombining();
        arm.flushWriteCombining();
    }
}

package io.gda4j.mlx5;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/** Malformed WQEs give typed faults (never exceptions); well-formed ones survive the ring wrap. */
class WqeDecoderTest {
    private static final int QPN = 0x00c0de;
    private static final int WQEBBS = 8;

    private static ByteBuffer ring() {
        return ByteBuffer.allocateDirect(WQEBBS * WqeDescriptor.WQEBB_SIZE);
    }

    private static int ctrl(long index) {
        return WqeDescriptor.segmentOffset(index, WqeDescriptor.CTRL_SEGMENT, WQEBBS);
    }

    @Test
    void inlineWriteWrapsAroundTheRingAndDecodes() {
        ByteBuffer sq = ring();
        byte[] payload = new byte[200];
        new SplittableRandom(1).nextBytes(payload);
        long index = 0x2_0006; // slot 6 of 8: the WQE's 4 WQEBBs take slots 6, 7, 0, 1
        int wqebbs = WqeEncoder.writeRdmaWriteInline(sq, index, QPN, WqeDescriptor.FM_CE_SE_CQ_UPDATE, 0x1000, 7,
                payload, 0, payload.length);
        assertEquals(4, wqebbs);
        DecodedWqe wqe = WqeDecoder.decode(sq, index, QPN);
        assertTrue(wqe.ok(), wqe::toString);
        assertEquals(WqeDescriptor.inlineDs(200), wqe.ds());
        assertEquals(4, wqe.wqebbs());
        assertTrue(wqe.signaled());
        assertArrayEquals(payload, wqe.inlinePayload());
    }

    @Test
    void encoderIgnoresTheBufferByteOrder() {
        ByteBuffer big = ring();
        ByteBuffer little = ring().order(ByteOrder.LITTLE_ENDIAN);
        WqeEncoder.writeRdmaWrite(big, 3, QPN, 0, 0x1122334455667788L, 0x99, 0x10, 0x20, 64);
        WqeEncoder.writeRdmaWrite(little, 3, QPN, 0, 0x1122334455667788L, 0x99, 0x10, 0x20, 64);
        assertEquals(big.rewind(), little.rewind());
    }

    @Test
    void encoderWorksOnHeapBuffersToo() {
        ByteBuffer heap = ByteBuffer.allocate(WQEBBS * WqeDescriptor.WQEBB_SIZE);
        WqeEncoder.writeAtomicFetchAdd(heap, 1, QPN, 0, 0x40, 1, 5, 0, 2);
        assertEquals(5L, WqeDecoder.decode(heap, 1).swapAdd());
    }

    @Test
    void unknownAndUnsupportedOpcodes() {
        ByteBuffer sq = ring();
        WqeEncoder.writeNop(sq, 0, QPN, 0);
        sq.put(ctrl(0) + 3, (byte) 0x3f);
        DecodedWqe unknown = WqeDecoder.decode(sq, 0);
        assertEquals(WqeFault.UNKNOWN_OPCODE, unknown.fault());
        assertEquals(CqeSyndrome.LOCAL_QP_OP, unknown.fault().syndrome());
        assertEquals(0x3f, unknown.opcode());

        sq.put(ctrl(0) + 3, (byte) Mlx5Opcode.SEND);
        assertEquals(WqeFault.UNSUPPORTED_OPCODE, WqeDecoder.decode(sq, 0).fault());
        sq.put(ctrl(0) + 3, (byte) Mlx5Opcode.ATOMIC_MASKED_FA);
        assertEquals(WqeFault.UNSUPPORTED_OPCODE, WqeDecoder.decode(sq, 0).fault());
    }

    @Test
    void dsMustFitTheOpcode() {
        ByteBuffer sq = ring();
        WqeEncoder.writeRdmaWrite(sq, 0, QPN, 0, 0x40, 1, 0x80, 2, 8);
        for (int ds : new int[] {0, 1, 2, 4, 5, WqeDescriptor.MAX_DS, 0xff}) {
            sq.put(ctrl(0) + 7, (byte) ds);
            DecodedWqe wqe = WqeDecoder.decode(sq, 0);
            assertEquals(WqeFault.BAD_DS, wqe.fault(), () -> "ds " + ds);
            assertEquals(ds, wqe.ds());
        }
        WqeEncoder.writeNop(sq, 1, QPN, 0);
        sq.put(ctrl(1) + 7, (byte) 2);
        assertEquals(WqeFault.BAD_DS, WqeDecoder.decode(sq, 1).fault());
        WqeEncoder.writeAtomicCompareSwap(sq, 2, QPN, 0, 0x40, 1, 0, 1, 0, 2);
        sq.put(ctrl(2) + 7, (byte) 3);
        assertEquals(WqeFault.BAD_DS, WqeDecoder.decode(sq, 2).fault());
    }

    @Test
    void dsLargerThanTheRingIsRefused() {
        ByteBuffer small = ByteBuffer.allocateDirect(2 * WqeDescriptor.WQEBB_SIZE);
        byte[] payload = new byte[60];
        WqeEncoder.writeRdmaWriteInline(small, 0, QPN, 0, 0, 0, payload, 0, payload.length);
        assertTrue(WqeDecoder.decode(small, 0).ok());
        small.put(7, (byte) 9); // 9 segments = 144 bytes > a 128-byte ring
        assertEquals(WqeFault.BAD_DS, WqeDecoder.decode(small, 0).fault());
    }

    @Test
    void inlineLengthBeyondTheWqe() {
        ByteBuffer sq = ring();
        byte[] payload = new byte[8];
        WqeEncoder.writeRdmaWriteInline(sq, 0, QPN, 0, 0x40, 1, payload, 0, payload.length); // ds 3
        int inline = WqeDescriptor.segmentOffset(0, WqeDescriptor.INLINE_SEGMENT, WQEBBS);
        for (int length : new int[] {13, 100, WqeDescriptor.INLINE_BYTE_COUNT_MASK}) {
            BigEndian.putInt(sq, inline, length | WqeDescriptor.INLINE_SEG);
            DecodedWqe wqe = WqeDecoder.decode(sq, 0);
            assertEquals(WqeFault.INLINE_BEYOND_WQE, wqe.fault(), () -> "length " + length);
            assertEquals(CqeSyndrome.LOCAL_LENGTH, wqe.fault().syndrome());
        }
        BigEndian.putInt(sq, inline, 2 | WqeDescriptor.INLINE_SEG);
        assertTrue(WqeDecoder.decode(sq, 0).ok(), "2 bytes fit the 12 that ds 3 leaves");
    }

    @Test
    void inlineIsRefusedWhereADataSegmentIsNeeded() {
        ByteBuffer sq = ring();
        WqeEncoder.writeRdmaRead(sq, 0, QPN, 0, 0x40, 1, 0x80, 2, 8);
        int data = WqeDescriptor.segmentOffset(0, WqeDescriptor.RDMA_DATA_SEGMENT, WQEBBS);
        BigEndian.putInt(sq, data, 8 | WqeDescriptor.INLINE_SEG);
        assertEquals(WqeFault.INLINE_NOT_ALLOWED, WqeDecoder.decode(sq, 0).fault());

        WqeEncoder.writeAtomicFetchAdd(sq, 1, QPN, 0, 0x40, 1, 1, 0x80, 2);
        int atomicData = WqeDescriptor.segmentOffset(1, WqeDescriptor.ATOMIC_DATA_SEGMENT, WQEBBS);
        BigEndian.putInt(sq, atomicData, 8 | WqeDescriptor.INLINE_SEG);
        assertEquals(WqeFault.INLINE_NOT_ALLOWED, WqeDecoder.decode(sq, 1).fault());
    }

    @Test
    void atomicsMoveEightBytes() {
        ByteBuffer sq = ring();
        WqeEncoder.writeAtomicFetchAdd(sq, 0, QPN, 0, 0x40, 1, 1, 0x80, 2);
        BigEndian.putInt(sq, WqeDescriptor.segmentOffset(0, WqeDescriptor.ATOMIC_DATA_SEGMENT, WQEBBS), 4);
        DecodedWqe wqe = WqeDecoder.decode(sq, 0);
        assertEquals(WqeFault.BAD_ATOMIC_LENGTH, wqe.fault());
        assertEquals(CqeSyndrome.LOCAL_LENGTH, wqe.fault().syndrome());
    }

    @Test
    void opmodMustBeZeroForPlainOpcodes() {
        ByteBuffer sq = ring();
        WqeEncoder.writeRdmaWrite(sq, 0, QPN, 0, 0x40, 1, 0x80, 2, 8);
        sq.put(ctrl(0), (byte) Mlx5Opcode.OPMOD_MASKED_ATOMIC_8_BYTES);
        assertEquals(WqeFault.BAD_OPMOD, WqeDecoder.decode(sq, 0).fault());
    }

    @Test
    void staleSlotAndForeignQpAreReported() {
        ByteBuffer sq = ring();
        WqeEncoder.writeNop(sq, 5, QPN, 0);
        assertEquals(WqeFault.WQE_INDEX_MISMATCH, WqeDecoder.decode(sq, 5 + WQEBBS).fault(),
                "the slot still holds the previous lap's WQE");
        DecodedWqe foreign = WqeDecoder.decode(sq, 5, QPN + 1);
        assertEquals(WqeFault.QPN_MISMATCH, foreign.fault());
        assertEquals(QPN, foreign.qpn());
        assertNull(foreign.inlinePayload());
    }

    @Test
    void garbageNeverThrows() {
        SplittableRandom random = new SplittableRandom(42);
        ByteBuffer sq = ring();
        byte[] noise = new byte[sq.capacity()];
        int ok = 0;
        for (int round = 0; round < 20_000; round++) {
            random.nextBytes(noise);
            sq.put(0, noise);
            long index = random.nextLong();
            // Make the index match so that decoding goes past the first check most of the time.
            int ctrl = ctrl(index);
            sq.putShort(ctrl + 1, (short) index);
            if (WqeDecoder.decode(sq, index).ok()) {
                ok++;
            }
        }
        assertTrue(ok < 20_000);
    }

    @Test
    void encoderRefusesArgumentsThatDoNotFit() {
        ByteBuffer sq = ring();
        assertThrows(IllegalArgumentException.class, () -> WqeEncoder.writeNop(sq, 0, 0x1000000, 0));
        assertThrows(IllegalArgumentException.class, () -> WqeEncoder.writeNop(sq, 0, 1, 0x100));
        assertThrows(IllegalArgumentException.class,
                () -> WqeEncoder.writeRdmaWrite(sq, 0, 1, 0, 0, 0, 0, 0, 0x80000000));
        byte[] tooLong = new byte[WqeDescriptor.MAX_INLINE_BYTES + 1];
        assertThrows(IllegalArgumentException.class,
                () -> WqeEncoder.writeRdmaWriteInline(sq, 0, 1, 0, 0, 0, tooLong, 0, tooLong.length));
        assertThrows(IllegalArgumentException.class,
                () -> WqeEncoder.writeNop(ByteBuffer.allocateDirect(3 * WqeDescriptor.WQEBB_SIZE), 0, 1, 0));
    }

    @Test
    void maxInlineFillsSixteenWqebbs() {
        ByteBuffer sq = ByteBuffer.allocateDirect(16 * WqeDescriptor.WQEBB_SIZE);
        byte[] payload = new byte[WqeDescriptor.MAX_INLINE_BYTES];
        assertEquals(WqeDescriptor.MAX_WQEBBS, WqeEncoder.writeRdmaWriteInline(sq, 9, 1, 0, 0, 0, payload, 0,
                payload.length));
        assertEquals(WqeDescriptor.MAX_DS, WqeDecoder.decode(sq, 9).ds());
    }
}

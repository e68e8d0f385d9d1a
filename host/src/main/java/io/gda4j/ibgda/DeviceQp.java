package io.gda4j.ibgda;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.nic.QpRings;
import io.gda4j.world.InlineSlotDescriptor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A {@link DeviceQpDescriptor} struct in GPU memory, followed by its {@code wqe_sizes} table (one byte per SQ slot):
 * what a kernel posts through. Written once by the host; the counters start at zero and belong to the GPU after that.
 * Closing frees the memory; the QP itself is owned elsewhere.
 */
public final class DeviceQp implements AutoCloseable {
    private final DeviceMemory memory;
    private final int qpn;

    private DeviceQp(DeviceMemory memory, int qpn) {
        this.memory = memory;
        this.qpn = qpn;
    }

    /**
     * What the GPU needs besides the rings: heap addressing, keys, flush, where discarded fetched values go (the null
     * MR: {@code discardAddr} 0; or a scratch word), and a peer rank for error records.
     */
    public record Addressing(long localBase, long remoteBase, long heapSizeBytes, int lkey, int rkey,
                             long flushQp, long flushFlag, int flushRkey, long discardAddr, int discardLkey,
                             boolean flushOnQuiet, boolean relaxedOrdering, int peer) {
        /** For a QP that only the flush uses (and tests): no heap, no flush of its own. */
        public static Addressing none(int peer) {
            return new Addressing(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, false, peer);
        }
    }

    /** Allocates the struct and its size table on {@code gpu} and writes them. */
    public static DeviceQp create(CudaContext gpu, QpRings rings, Addressing a) {
        long length = DeviceQpDescriptor.LENGTH + (long) rings.sqWqebbs();
        DeviceMemory memory = gpu.allocate(length);
        try {
            memory.fill((byte) 0);
            ByteBuffer b = ByteBuffer.allocateDirect(DeviceQpDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            long sizes = memory.address() + DeviceQpDescriptor.LENGTH;
            encode(b, rings, a, sizes);
            b.position(0);
            memory.copyFromHost(0, b);
            return new DeviceQp(memory, rings.qpn());
        } catch (RuntimeException e) {
            memory.close();
            throw e;
        }
    }

    /** The 256 bytes of the struct for {@code rings} and {@code a}, with the size table at {@code wqeSizes}. */
    static void encode(ByteBuffer b, QpRings rings, Addressing a, long wqeSizes) {
        if (a.heapSizeBytes() > 0 && rings.maxInlineBytes() < InlineSlotDescriptor.SIZE) {
            // The device API posts put_inline (the 16-byte slot) and SET signals (8 bytes) as inline WRITEs.
            throw new IllegalArgumentException(String.format("QP 0x%06x accepts inline payloads of %d bytes, but the"
                    + " device API's put_inline needs %d: create the QPs with QpSpec.maxInlineBytes >= %d",
                    rings.qpn(), rings.maxInlineBytes(), InlineSlotDescriptor.SIZE, InlineSlotDescriptor.SIZE));
        }
        b.putLong(DeviceQpDescriptor.SQ_BUF_OFFSET, rings.sqBuf());
        b.putLong(DeviceQpDescriptor.DBREC_OFFSET, rings.dbrec());
        b.putLong(DeviceQpDescriptor.DOORBELL_OFFSET, rings.doorbell());
        b.putLong(DeviceQpDescriptor.CQ_BUF_OFFSET, rings.cqBuf());
        b.putLong(DeviceQpDescriptor.CQ_DBREC_OFFSET, rings.cqDbrec());
        b.putLong(DeviceQpDescriptor.WQE_SIZES_OFFSET, wqeSizes);
        b.putInt(DeviceQpDescriptor.SQ_WQEBBS_OFFSET, rings.sqWqebbs());
        b.putInt(DeviceQpDescriptor.CQE_COUNT_OFFSET, rings.cqeCount());
        b.putInt(DeviceQpDescriptor.QPN_OFFSET, rings.qpn());
        int flags = (a.flushOnQuiet() && a.flushQp() != 0 ? DeviceQpDescriptor.FLAG_FLUSH_ON_QUIET : 0)
                | (a.relaxedOrdering() ? DeviceQpDescriptor.FLAG_RELAXED_ORDERING : 0);
        b.putInt(DeviceQpDescriptor.FLAGS_OFFSET, flags);
        b.putLong(DeviceQpDescriptor.LOCAL_BASE_OFFSET, a.localBase());
        b.putLong(DeviceQpDescriptor.REMOTE_BASE_OFFSET, a.remoteBase());
        b.putLong(DeviceQpDescriptor.HEAP_SIZE_BYTES_OFFSET, a.heapSizeBytes());
        b.putInt(DeviceQpDescriptor.LKEY_OFFSET, a.lkey());
        b.putInt(DeviceQpDescriptor.RKEY_OFFSET, a.rkey());
        b.putLong(DeviceQpDescriptor.FLUSH_QP_OFFSET, a.flushQp());
        b.putLong(DeviceQpDescriptor.FLUSH_FLAG_OFFSET, a.flushFlag());
        b.putInt(DeviceQpDescriptor.FLUSH_RKEY_OFFSET, a.flushRkey());
        b.putInt(DeviceQpDescriptor.DISCARD_LKEY_OFFSET, a.discardLkey());
        b.putLong(DeviceQpDescriptor.DISCARD_ADDR_OFFSET, a.discardAddr());
        b.putInt(DeviceQpDescriptor.MAX_INLINE_OFFSET, rings.maxInlineBytes());
        b.putInt(DeviceQpDescriptor.PEER_OFFSET, a.peer());
    }

    /** The struct's GPU address: {@code PeerEntry.handle}. */
    public long address() {
        return memory.address();
    }

    public int qpn() {
        return qpn;
    }

    /** Reads a 64-bit counter of the struct (e.g. {@link DeviceQpDescriptor#CONS_HEAD_OFFSET}) after the kernels. */
    public long readCounter(int offset) {
        return memory.readLong(offset);
    }

    @Override
    public void close() {
        memory.close();
    }

    @Override
    public String toString() {
        return String.format("DeviceQp[QP 0x%06x at 0x%x]", qpn, address());
    }
}

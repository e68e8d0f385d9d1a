package io.gda4j.ibgda;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.nic.QpRings;
import io.gda4j.world.InlineSlotDescriptor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@link DeviceQpDescriptor} structs of one peer's QPs in GPU memory, one after another (a peer reached over
 * several QPs has one per QP), followed by their {@code wqe_sizes} tables (one byte per SQ slot): what a kernel posts
 * through. Written once by the host; the counters start at zero and belong to the GPU after that. Closing frees the
 * memory; the QPs themselves are owned elsewhere.
 */
public final class DeviceQp implements AutoCloseable {
    private final DeviceMemory memory;
    private final List<Integer> qpns;

    private DeviceQp(DeviceMemory memory, List<Integer> qpns) {
        this.memory = memory;
        this.qpns = qpns;
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

    /** One QP's struct and its size table on {@code gpu}. */
    public static DeviceQp create(CudaContext gpu, QpRings rings, Addressing a) {
        return create(gpu, List.of(rings), a);
    }

    /**
     * The structs of one peer's QPs ({@code rings}, in their channel order), then their size tables, on {@code gpu}:
     * entry {@code i} gets {@code qp_count = rings.size()} and {@code qp_index = i}.
     */
    public static DeviceQp create(CudaContext gpu, List<QpRings> rings, Addressing a) {
        if (rings.isEmpty()) {
            throw new IllegalArgumentException("a peer needs at least one QP");
        }
        int n = rings.size();
        long length = (long) n * DeviceQpDescriptor.LENGTH + rings.stream().mapToLong(QpRings::sqWqebbs).sum();
        DeviceMemory memory = gpu.allocate(length);
        try {
            memory.fill((byte) 0);
            ByteBuffer b = ByteBuffer.allocateDirect(n * DeviceQpDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            long sizes = memory.address() + (long) n * DeviceQpDescriptor.LENGTH;
            List<Integer> qpns = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                encode(b.slice(i * DeviceQpDescriptor.LENGTH, DeviceQpDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN),
                        rings.get(i), a, sizes, i, n);
                sizes += rings.get(i).sqWqebbs();
                qpns.add(rings.get(i).qpn());
            }
            b.position(0);
            memory.copyFromHost(0, b);
            return new DeviceQp(memory, List.copyOf(qpns));
        } catch (RuntimeException e) {
            memory.close();
            throw e;
        }
    }

    /** The 256 bytes of the struct for {@code rings} and {@code a}, with the size table at {@code wqeSizes}. */
    static void encode(ByteBuffer b, QpRings rings, Addressing a, long wqeSizes) {
        encode(b, rings, a, wqeSizes, 0, 1);
    }

    /** The same, as entry {@code index} of an array of {@code count} (one peer's QPs). */
    static void encode(ByteBuffer b, QpRings rings, Addressing a, long wqeSizes, int index, int count) {
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
        b.putInt(DeviceQpDescriptor.QP_COUNT_OFFSET, count);
        b.putInt(DeviceQpDescriptor.QP_INDEX_OFFSET, index);
    }

    /** The first struct's GPU address: {@code PeerEntry.handle}. */
    public long address() {
        return memory.address();
    }

    /** The first QP's number. */
    public int qpn() {
        return qpns.get(0);
    }

    /** How many QPs (structs) this holds. */
    public int qpCount() {
        return qpns.size();
    }

    /** Reads a 64-bit counter of the first struct (e.g. {@link DeviceQpDescriptor#CONS_HEAD_OFFSET}) after the kernels. */
    public long readCounter(int offset) {
        return readCounter(0, offset);
    }

    /** Reads a 64-bit counter of struct {@code index}. */
    public long readCounter(int index, int offset) {
        return memory.readLong((long) index * DeviceQpDescriptor.LENGTH + offset);
    }

    @Override
    public void close() {
        memory.close();
    }

    @Override
    public String toString() {
        return qpns.size() == 1 ? String.format("DeviceQp[QP 0x%06x at 0x%x]", qpn(), address())
                : String.format("DeviceQp[%d QPs from 0x%06x at 0x%x]", qpns.size(), qpn(), address());
    }
}

package io.gda4j.cuda;

import com.sun.jna.Memory;

import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * The 8-byte writes (the proxy's signal SETs, a flush's completion word) a thread queues back to back on one stream,
 * submitted with one {@code cuStreamBatchMemOp} instead of one {@code cuStreamWriteValue64} each. An 8-byte
 * {@code put_signal} is two such writes (the data's word, then the signal's), and every driver call that queues
 * work on a stream also submits it to the GPU: one call per pair saves a submission on every leg of a round trip.
 * The writes keep their order: the driver queues a batch's operations in array order, and the handler submits the
 * batch before it queues anything else on the stream.
 *
 * <p>One operation is cuda.h's {@code CUstreamBatchMemOpParams} union (48 bytes) holding its
 * {@code CUstreamMemOpWriteValueParams_st} ({@code StreamWriteBatchTest} checks the offsets against cuda.h):
 * <pre>
 *  byte  0        4        8                16               24       28       32               40               48
 *        +--------+--------+----------------+----------------+--------+--------+----------------+----------------+
 *        | op = 5 | (pad)  | address        | value64        | flags  | (pad)  | alias (driver) | (union pad)    |
 *        | WRITE_ |        | CUdeviceptr    |                | = 0    |        |                |                |
 *        | VALUE_64        |                |                |        |        |                |                |
 *        +--------+--------+----------------+----------------+--------+--------+----------------+----------------+
 * </pre>
 * A single write, and every write where libcuda cannot be bound through JNA
 * ({@link LibCuda#unavailableReason()}), goes as one {@code cuStreamWriteValue64}, in the same order.
 *
 * <p>Not thread-safe: one per stream and thread (the proxy's: one per channel, used by the thread that owns it).
 */
public final class StreamWriteBatch {
    /** Bytes of one operation (cuda.h: {@code sizeof(CUstreamBatchMemOpParams)}). */
    static final int OP_BYTES = 48;
    static final int OP_OFFSET = 0;
    static final int ADDRESS_OFFSET = 8;
    static final int VALUE_OFFSET = 16;
    static final int FLAGS_OFFSET = 24;
    /** {@code CU_STREAM_MEM_OP_WRITE_VALUE_64}. */
    static final int CU_STREAM_MEM_OP_WRITE_VALUE_64 = 5;
    /** Writes held before the batch must be submitted: the triggers of one poll rarely hold more in a row. */
    public static final int CAPACITY = 32;

    private final CudaStream stream;
    private final long nativeStream;
    private final Memory ops = new Memory((long) OP_BYTES * CAPACITY);
    private final long[] addresses = new long[CAPACITY];
    private final long[] values = new long[CAPACITY];
    private final MutableDevicePointer word = new MutableDevicePointer();
    private int count;
    private long firstPosition = -1;

    /** Writes for {@code stream}; null for a batch that is only encoded (tests). */
    public StreamWriteBatch(CudaStream stream) {
        this.stream = stream;
        this.nativeStream = stream == null ? 0 : CudaStream.nativeHandle(stream.handle());
        ops.clear();
    }

    public boolean isEmpty() {
        return count == 0;
    }

    public boolean isFull() {
        return count == CAPACITY;
    }

    public int size() {
        return count;
    }

    /** The trigger position of the oldest write held, or -1 when none is; for error messages. */
    public long firstPosition() {
        return firstPosition;
    }

    /**
     * Holds a write of {@code value} to the device address {@code address}, after those already held.
     *
     * @throws IllegalStateException when the batch is full: submit it first
     */
    public void add(long address, long value, long position) {
        if (count == CAPACITY) {
            throw new IllegalStateException("the stream write batch holds " + CAPACITY + " writes: submit it first");
        }
        long at = (long) count * OP_BYTES;
        ops.setInt(at + OP_OFFSET, CU_STREAM_MEM_OP_WRITE_VALUE_64); // whole, whatever the driver left in the slot
        ops.setLong(at + ADDRESS_OFFSET, address);
        ops.setLong(at + VALUE_OFFSET, value);
        ops.setInt(at + FLAGS_OFFSET, 0);
        addresses[count] = address;
        values[count] = value;
        if (count == 0) {
            firstPosition = position;
        }
        count++;
    }

    /** Forgets the writes held. */
    public void clear() {
        count = 0;
        firstPosition = -1;
    }

    /** The operation bytes of the writes held, as the driver reads them (tests). */
    byte[] encoded() {
        return ops.getByteArray(0, count * OP_BYTES);
    }

    /**
     * Queues the writes held on the stream, in the order they were added, and empties the batch whatever the result.
     * The stream's context must be current.
     *
     * @return the driver's result: {@link Driver#SUCCESS}, or the first failure
     */
    public int submit() {
        int n = count;
        clear();
        if (n == 0) {
            return CUresult.CUDA_SUCCESS;
        }
        if (n > 1 && LibCuda.unavailableReason() == null) {
            return LibCuda.cuStreamBatchMemOp_v2(nativeStream, n, ops, 0);
        }
        // One write alone goes as it always went: a bare signal's round trip measured 0-2 us slower in a batch of one.
        for (int i = 0; i < n; i++) {
            word.set(addresses[i]);
            int result = JCudaDriver.cuStreamWriteValue64(stream.handle(), word, values[i], 0);
            if (result != CUresult.CUDA_SUCCESS) {
                return result;
            }
        }
        return CUresult.CUDA_SUCCESS;
    }
}

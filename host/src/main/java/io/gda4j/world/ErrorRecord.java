package io.gda4j.world;

import io.gda4j.transport.TransportTag;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import io.gda4j.world.ErrorRecordDescriptor.Op;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * A decoded device error record (see {@link ErrorRecordDescriptor}): what a device API call was doing when it
 * failed, with the values involved.
 */
public record ErrorRecord(Code code, int rank, int peer, Op op, long offset, long expected, long seen,
                          long elapsedNanos, int block, int thread, int cmp) {

    /** Decodes the 64 bytes at the buffer's position (little-endian, as the GPU wrote them). */
    public static ErrorRecord decode(ByteBuffer raw) {
        ByteBuffer b = raw.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int base = b.position();
        return new ErrorRecord(
                Code.of(b.getInt(base + ErrorRecordDescriptor.CODE_OFFSET)),
                b.getInt(base + ErrorRecordDescriptor.RANK_OFFSET),
                b.getInt(base + ErrorRecordDescriptor.PEER_OFFSET),
                Op.of(b.getInt(base + ErrorRecordDescriptor.OP_OFFSET)),
                b.getLong(base + ErrorRecordDescriptor.OFFSET_OFFSET),
                b.getLong(base + ErrorRecordDescriptor.EXPECTED_OFFSET),
                b.getLong(base + ErrorRecordDescriptor.SEEN_OFFSET),
                b.getLong(base + ErrorRecordDescriptor.ELAPSED_NS_OFFSET),
                b.getInt(base + ErrorRecordDescriptor.BLOCK_OFFSET),
                b.getInt(base + ErrorRecordDescriptor.THREAD_OFFSET),
                b.getInt(base + ErrorRecordDescriptor.CMP_OFFSET));
    }

    public boolean isError() {
        return code != Code.NONE;
    }

    /** A sentence a person can act on; {@code waitTimeout} is the configured limit, named in timeout messages. */
    public String describe(Duration waitTimeout) {
        String target = code == Code.WAIT_TIMEOUT || peer < 0 ? "" : " to peer " + peer;
        String where = String.format(Locale.ROOT, "rank %d, %s%s (block %d, thread %d)", rank, op.apiName(), target, block, thread);
        switch (code) {
            case WAIT_TIMEOUT:
                return String.format(Locale.ROOT,
                        "%s timed out after %.3f s: the signal at heap offset 0x%x was %d, waiting for %s %d. "
                                + "Nothing signalled it in time: check that the peer's kernel runs and signals this offset "
                                + "with that value, or raise the wait timeout (%s or -D%s, now %d ms).",
                        where, elapsedNanos / 1e9, offset, seen, Cmp.ofCode(cmp).symbol(), expected,
                        WorldConfig.WAIT_TIMEOUT_ENV, WorldConfig.WAIT_TIMEOUT_PROP_NAME, waitTimeout.toMillis());
            case OUT_OF_RANGE:
                return String.format(Locale.ROOT,
                        "%s addressed [0x%x, 0x%x + %d) outside the symmetric heap of %d bytes: "
                                + "allocate buffers from World.heap() and keep offsets inside them.",
                        where, offset, offset, expected, seen);
            case BAD_PEER:
                return String.format(Locale.ROOT,
                        "%s: the world has %d ranks, or no transport connects them.",
                        where, seen);
            case UNSUPPORTED_TRANSPORT:
                if (op == Op.PUT_INLINE) {
                    return String.format(Locale.ROOT,
                            "%s: that peer's transport is %s, and put_inline needs direct stores into the peer's memory "
                                    + "(p2p); use put_signal for small messages over other transports.",
                            where, transportName(seen));
                }
                return String.format(Locale.ROOT,
                        "%s: that peer's transport is %s, which this kernel's device API does not support yet.",
                        where, transportName(seen));
            case PROXY_FIFO_FULL:
                return String.format(Locale.ROOT,
                        "%s timed out after %.3f s waiting for room in the proxy FIFO: trigger position %d needs the "
                                + "proxy to have popped %d triggers, it had popped %d. The host proxy thread is not "
                                + "draining this channel (stopped, dead or blocked: see the transport problems), or "
                                + "the wait timeout (%s or -D%s, now %d ms) is shorter than the queued work.",
                        where, elapsedNanos / 1e9, offset, expected, seen, WorldConfig.WAIT_TIMEOUT_ENV,
                        WorldConfig.WAIT_TIMEOUT_PROP_NAME, waitTimeout.toMillis());
            case PROXY_FLUSH_TIMEOUT:
                return String.format(Locale.ROOT,
                        "%s timed out after %.3f s waiting for the host proxy to complete up to trigger position %d: "
                                + "it had completed %d triggers. The proxy thread is not executing this channel "
                                + "(stopped, dead or blocked: see the transport problems), or the copies queued before "
                                + "take longer than the wait timeout (%s or -D%s, now %d ms).",
                        where, elapsedNanos / 1e9, offset, seen, WorldConfig.WAIT_TIMEOUT_ENV,
                        WorldConfig.WAIT_TIMEOUT_PROP_NAME, waitTimeout.toMillis());
            case PROXY_STOPPED:
                return String.format(Locale.ROOT,
                        "%s: the host proxy serving this channel is %s (state %d), so nothing pushed to it runs any "
                                + "more (trigger position %d). Close the world and build a new one; the transport "
                                + "problems say why it stopped.",
                        where, seen == 2 ? "dead" : "stopped", seen, offset);
            case TRIGGER_FIELD:
                return String.format(Locale.ROOT,
                        "%s at heap offset 0x%x: the value 0x%x does not fit a proxy trigger (offsets and sizes must be "
                                + "below 0x%x, signal words 8-byte aligned): keep the heap under 256 GiB.",
                        where, offset, seen, expected);
            case MISALIGNED:
                return String.format(Locale.ROOT,
                        "%s: the word at heap offset 0x%x is not %d-byte aligned; use HeapBuffer.word(i) "
                                + "(inline slots need 16).",
                        where, offset, expected);
            case CQE_ERROR:
                return where + ": " + describeCqe();
            case SQ_FULL:
            case POST_TIMEOUT:
                if (elapsedNanos == 0) {
                    // transport/ibgda_qp.cuh fail_dead: a call on a QP that an earlier post left failed (elapsed is
                    // never 0 else).
                    return String.format(Locale.ROOT,
                            "%s: QP 0x%06x failed earlier: a post %s after reserving its send queue slots and never"
                                    + " published them (reserved %d WQEBBs, published %d, completed %d), so nothing"
                                    + " after them can be posted; every call on this QP fails at once. The first"
                                    + " failure's record says why; close the world and build a new one.",
                            where, cmp, code == Code.SQ_FULL
                                    ? "found the send queue full" : "stalled", expected, offset, seen);
                }
                return describeStall(where, waitTimeout);
            case SET_SIGNAL_RELAXED:
                return String.format(Locale.ROOT,
                        "%s at heap offset 0x%x: QP 0x%06x writes with relaxed ordering, so a SET signal (an 8-byte"
                                + " WRITE) could arrive before the data it guards; nothing was posted. Signal with"
                                + " SignalOp.ADD (an RDMA atomic, which cannot pass the writes before it), or turn"
                                + " relaxed ordering off (GDA4J_MLX5_RELAXED_ORDERING=false).",
                        where, offset, cmp);
            case NO_NATIVE_ATOMICS:
                return String.format(Locale.ROOT,
                        "%s at heap offset 0x%x: the p2p link to rank %d has no native atomics (PCIe without"
                                + " CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED; '*' in the peer matrix of gda4j"
                                + " info), so an atomic add there would be a read and a write and lose concurrent"
                                + " updates; nothing was written. Signal with SignalOp.SET, or reach that peer over"
                                + " the proxy or ibgda transport (GDA4J_TRANSPORT).",
                        where, offset, peer);
            case MIXED_ATOMICS:
                return String.format(Locale.ROOT,
                        "%s at heap offset 0x%x: rank %d has IBGDA links, so its words get NIC atomics, and a GPU"
                                + " atomic add over %s would not be atomic with them (updates would be lost);"
                                + " nothing was added. Atomics on one word go through one path: reach rank %d over"
                                + " ibgda for adds (GDA4J_TRANSPORT=ibgda), or signal it with SignalOp.SET.",
                        where, offset, peer, transportPhrase(cmp), peer);
            case COMBINE_INPUT_MIXED:
                return String.format(Locale.ROOT,
                        "%s: this rank's combine %d read its expert outputs from %s, rank %d's from %s. Every rank of"
                                + " a combine must do the same: pass its combine input as y on every rank"
                                + " (MoeRank.combineInput(), or MoeLowLatencyDispatch.combineInput() in low-latency"
                                + " mode: the rows are pulled from the peers' heaps) or a tensor of its own on every"
                                + " rank (the rows are pushed); nothing was combined.",
                        where, expected >>> 1, heapOrOwn(expected), peer, heapOrOwn(seen));
            case INLINE_TOO_LARGE:
                return String.format(Locale.ROOT,
                        "%s at heap offset 0x%x: an inline payload of %d bytes exceeds the QP's max_inline of %d"
                                + " bytes; nothing was posted. Create the QPs with a larger inline limit (put_inline"
                                + " needs 16 bytes, a SET signal 8).",
                        where, offset, expected, seen);
            default:
                return where + ": no error";
        }
    }

    private static String heapOrOwn(long entryWord) {
        return (entryWord & 1) != 0 ? "its heap's combine input" : "a tensor of its own";
    }

    private String describeStall(String where, Duration waitTimeout) {
        switch (code) {
            case SQ_FULL:
                return String.format(Locale.ROOT,
                        "%s: the send queue of QP 0x%06x stayed full for %.3f s: the WQE at counter %d needs %d WQEBBs"
                                + " completed, but only %d are. The NIC stopped completing work (emulated NIC: its"
                                + " engine thread stopped or the world is closing; real NIC: link down or the peer QP"
                                + " is not connected), or raise the wait timeout (%s or -D%s, now %d ms).",
                        where, cmp, elapsedNanos / 1e9, offset, expected, seen, WorldConfig.WAIT_TIMEOUT_ENV,
                        WorldConfig.WAIT_TIMEOUT_PROP_NAME, waitTimeout.toMillis());
            case POST_TIMEOUT:
                return String.format(Locale.ROOT,
                        "%s: posting on QP 0x%06x stalled for %.3f s at counter %d, waiting for %d and seeing %d"
                                + " (an earlier reservation was never published, the doorbell lock was held, or"
                                + " quiet waited for completions that never came). Another thread of the kernel may"
                                + " have failed first; the NIC may have stopped.",
                        where, cmp, elapsedNanos / 1e9, offset, expected, seen);
            default:
                throw new IllegalStateException("not a stall: " + code);
        }
    }

    /**
     * The CQE_ERROR record as the transport that posted the WQE words it ({@link DeviceErrorDecoder}); the raw fields
     * where no decoder is on the class path.
     */
    private String describeCqe() {
        for (DeviceErrorDecoder decoder : Decoders.ALL) {
            Optional<String> text = decoder.describe(this);
            if (text.isPresent()) {
                return text.get();
            }
        }
        return String.format(Locale.ROOT, "RDMA completion error on QP 0x%06x, WQE index %d (opcode 0x%02x): "
                        + "syndrome 0x%02x, vendor syndrome 0x%02x, CQE opcode %d (no decoder for it is registered)",
                cmp & 0xffffff, offset & 0xffff, expected, seen & 0xff, (seen >>> 8) & 0xff, (seen >>> 16) & 0xf);
    }

    /** The transport of device code {@code code}, or empty for a code no provider on the class path defines. */
    private static Optional<TransportTag> tagOf(long code) {
        try {
            return Optional.of(TransportTag.ofCode((int) code));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static String transportName(long code) {
        return tagOf(code).map(TransportTag::name).orElse("code " + code);
    }

    /** How a message names the path of transport {@code code} after "over" ("the proxy", "p2p"). */
    private static String transportPhrase(int code) {
        return tagOf(code).map(TransportTag::phrase).orElse("transport code " + code);
    }

    /** Loaded at the first error CQE described, once: decoders are stateless and the class path does not change. */
    private static final class Decoders {
        static final List<DeviceErrorDecoder> ALL = load();

        private static List<DeviceErrorDecoder> load() {
            List<DeviceErrorDecoder> list = new ArrayList<>();
            ServiceLoader.load(DeviceErrorDecoder.class, ErrorRecord.class.getClassLoader()).forEach(list::add);
            return List.copyOf(list);
        }
    }
}

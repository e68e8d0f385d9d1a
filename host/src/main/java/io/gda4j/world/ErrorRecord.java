package io.gda4j.world;

import io.gda4j.transport.Capability;
import io.gda4j.transport.Transport;
import io.gda4j.transport.Transports;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import io.gda4j.world.ErrorRecordDescriptor.Op;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/**
 * A decoded device error record (see {@link ErrorRecordDescriptor}): what a device API call was doing when it
 * failed, with the values involved. {@code code} is one of the world's {@link Code}s or a code of a transport or the
 * MoE, which the {@link DeviceErrorDecoder} its owner registers words.
 */
public record ErrorRecord(int code, int rank, int peer, Op op, long offset, long expected, long seen,
                          long elapsedNanos, int block, int thread, int cmp) {

    /** Decodes the 64 bytes at the buffer's position (little-endian, as the GPU wrote them). */
    public static ErrorRecord decode(ByteBuffer raw) {
        ByteBuffer b = raw.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int base = b.position();
        return new ErrorRecord(
                b.getInt(base + ErrorRecordDescriptor.CODE_OFFSET),
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
        return code != Code.NONE.value();
    }

    /** Whether the failed call gave up waiting (the host reports these as {@link DeviceWaitTimeoutException}). */
    public boolean isTimeout() {
        Optional<Code> own = Code.of(code);
        if (own.isPresent()) {
            return own.get() == Code.WAIT_TIMEOUT;
        }
        DeviceErrorDecoder decoder = Decoders.BY_CODE.get(code);
        return decoder != null && decoder.isTimeout(code);
    }

    /** The code's name ({@code WAIT_TIMEOUT}, {@code PROXY_FIFO_FULL}), or "code N" for one no decoder claims. */
    public String codeName() {
        Optional<Code> own = Code.of(code);
        if (own.isPresent()) {
            return own.get().name();
        }
        DeviceErrorDecoder decoder = Decoders.BY_CODE.get(code);
        return decoder != null ? decoder.codes().get(code) : "code " + code;
    }

    /** A sentence a person can act on; {@code waitTimeout} is the configured limit, named in timeout messages. */
    public String describe(Duration waitTimeout) {
        String target = code == Code.WAIT_TIMEOUT.value() || peer < 0 ? "" : " to peer " + peer;
        String where = String.format(Locale.ROOT, "rank %d, %s%s (block %d, thread %d)", rank, op.apiName(), target, block, thread);
        Optional<Code> own = Code.of(code);
        if (own.isEmpty()) {
            DeviceErrorDecoder decoder = Decoders.BY_CODE.get(code);
            return decoder != null ? decoder.describe(this, where, waitTimeout)
                    : String.format(Locale.ROOT, "%s: device error code %d, which no decoder on the class path words"
                            + " (offset 0x%x, expected %d, seen %d, cmp %d): is the module that owns it on the class path, or"
                            + " was the kernel built by another version of gda4j?",
                            where, code, offset, expected, seen, cmp);
        }
        switch (own.get()) {
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
                                    + "(a %s transport); use put_signal for small messages over other transports.",
                            where, transportName(seen), Capability.DIRECT);
                }
                return String.format(Locale.ROOT,
                        "%s: that peer's transport is %s, which this kernel's device API does not support yet.",
                        where, transportName(seen));
            case MISALIGNED:
                return String.format(Locale.ROOT,
                        "%s: the word at heap offset 0x%x is not %d-byte aligned; use HeapBuffer.word(i) "
                                + "(inline slots need 16).",
                        where, offset, expected);
            case MIXED_ATOMICS:
                // The transports whose ADDs are NIC atomics, from the table: "IBGDA" and "ibgda" today.
                String nicAtomics = Arrays.stream(Transport.values()).filter(t -> t.has(Capability.NIC_ATOMICS))
                        .map(Transport::toString).collect(Collectors.joining("/"));
                String typed = Arrays.stream(Transport.values()).filter(t -> t.has(Capability.NIC_ATOMICS))
                        .map(Transport::label).collect(Collectors.joining(" or "));
                return String.format(Locale.ROOT,
                        "%s at heap offset 0x%x: rank %d has %s links, so its words get NIC atomics, and a GPU"
                                + " atomic add over %s would not be atomic with them (updates would be lost);"
                                + " nothing was added. Atomics on one word go through one path: reach rank %d over"
                                + " %s for adds (%s=%s), or signal it with SignalOp.SET.",
                        where, offset, peer, nicAtomics, transportPhrase(cmp), peer, typed,
                        Transports.TRANSPORT_ENV, typed);
            default:
                return where + ": no error";
        }
    }

    private static String transportName(long code) {
        return Transport.ofCode(code).map(Transport::label).orElse("code " + code);
    }

    /** How a message names the path of transport {@code code} after "over" ("the proxy", "p2p"). */
    private static String transportPhrase(int code) {
        return Transport.ofCode(code).map(Transport::phrase).orElse("transport code " + code);
    }

    /** The decoders on the class path, loaded once (they are stateless and the class path does not change). */
    static final class Decoders {
        static final Map<Integer, DeviceErrorDecoder> BY_CODE = index(load());

        private static List<DeviceErrorDecoder> load() {
            List<DeviceErrorDecoder> list = new ArrayList<>();
            ServiceLoader.load(DeviceErrorDecoder.class, ErrorRecord.class.getClassLoader()).forEach(list::add);
            return list;
        }

        /**
         * Each code to the one decoder that words it.
         *
         * @throws IllegalStateException naming both when two decoders claim one code, or a decoder claims one of the
         *                               world's codes
         */
        static Map<Integer, DeviceErrorDecoder> index(List<DeviceErrorDecoder> decoders) {
            Map<Integer, DeviceErrorDecoder> byCode = new HashMap<>();
            for (DeviceErrorDecoder d : decoders) {
                for (Map.Entry<Integer, String> c : d.codes().entrySet()) {
                    Optional<Code> own = Code.of(c.getKey());
                    DeviceErrorDecoder other = byCode.putIfAbsent(c.getKey(), d);
                    if (own.isPresent() || other != null) {
                        throw new IllegalStateException("device error code " + c.getKey() + " (" + c.getValue()
                                + ") of " + d.getClass().getName() + " is also "
                                + (own.isPresent() ? "the world's " + own.get() : other.getClass().getName() + "'s "
                                + other.codes().get(c.getKey())) + ": every ERROR_* code of the device headers has one"
                                + " owner; two modules (or two versions of one) on the class path claim it");
                    }
                }
            }
            return Map.copyOf(byCode);
        }
    }
}

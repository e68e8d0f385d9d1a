package io.gda4j.proxy;

import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_ATOMIC_ADD;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_FLUSH;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_NOP;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_ADD;

import java.util.Locale;

/**
 * A decoded trigger, for messages, tests and tools. Hot paths decode fields straight from the words with
 * {@link TriggerFifoDescriptor} and never build one.
 *
 * @param kind       a {@code KIND_*} of {@link TriggerFifoDescriptor}
 * @param dstOffset  PUT, PUT_SIGNAL: destination offset in the peer's heap
 * @param srcOffset  PUT, PUT_SIGNAL: source offset in this rank's heap
 * @param sizeBytes  PUT, PUT_SIGNAL: bytes to copy
 * @param dstMemory  memory id of the destination (or the signal word)
 * @param srcMemory  memory id of the source
 * @param signalOp   SIGNAL, ATOMIC_ADD, PUT_SIGNAL: SIGNAL_OP_SET or SIGNAL_OP_ADD
 * @param wordOffset SIGNAL, ATOMIC_ADD, PUT_SIGNAL: the peer's 64-bit word
 * @param value      SIGNAL, ATOMIC_ADD, PUT_SIGNAL: the value set or added
 * @param cookie     NOP: the pusher's 63-bit cookie
 */
public record Trigger(int kind, long dstOffset, long srcOffset, long sizeBytes, int dstMemory, int srcMemory,
                      int signalOp, long wordOffset, long value, long cookie) {

    /** Decodes a trigger; {@code next0}/{@code next1} are the second slot of a PUT_SIGNAL (ignored otherwise). */
    public static Trigger decode(long word0, long word1, long next0, long next1) {
        int kind = TriggerFifoDescriptor.kind(word0);
        switch (kind) {
            case KIND_PUT:
                return new Trigger(kind, TriggerFifoDescriptor.dstOffset(word0), TriggerFifoDescriptor.srcOffset(word1),
                        TriggerFifoDescriptor.sizeBytes(word0, word1), TriggerFifoDescriptor.dstMemory(word1),
                        TriggerFifoDescriptor.srcMemory(word1), 0, 0, 0, 0);
            case KIND_PUT_SIGNAL:
                return new Trigger(kind, TriggerFifoDescriptor.dstOffset(word0), TriggerFifoDescriptor.srcOffset(word1),
                        TriggerFifoDescriptor.sizeBytes(word0, word1), TriggerFifoDescriptor.dstMemory(word1),
                        TriggerFifoDescriptor.srcMemory(word1), TriggerFifoDescriptor.signalOp(next0),
                        TriggerFifoDescriptor.wordOffset(next0), TriggerFifoDescriptor.signalValue(next0, next1), 0);
            case KIND_SIGNAL:
            case KIND_ATOMIC_ADD:
                return new Trigger(kind, 0, 0, 0, TriggerFifoDescriptor.signalMemory(word0), 0,
                        TriggerFifoDescriptor.signalOp(word0), TriggerFifoDescriptor.wordOffset(word0),
                        TriggerFifoDescriptor.signalValue(word0, word1), 0);
            default:
                return new Trigger(kind, 0, 0, 0, 0, 0, 0, 0, 0, kind == KIND_NOP ? TriggerFifoDescriptor.cookie(word1) : 0);
        }
    }

    /** E.g. {@code PUT 4096 B heap[0x100] -> peer heap[0x2000]} or {@code SIGNAL add 1 -> peer heap[0x40]}. */
    @Override
    public String toString() {
        String name = TriggerFifoDescriptor.kindName(kind);
        String signal = String.format(Locale.ROOT, "%s %d -> peer heap[0x%x]", signalOp == SIGNAL_OP_ADD ? "add" : "set",
                value, wordOffset);
        switch (kind) {
            case KIND_PUT:
                return String.format(Locale.ROOT, "%s %d B heap[0x%x] -> peer heap[0x%x]", name, sizeBytes, srcOffset,
                        dstOffset);
            case KIND_PUT_SIGNAL:
                return String.format(Locale.ROOT, "%s %d B heap[0x%x] -> peer heap[0x%x], then %s", name, sizeBytes,
                        srcOffset, dstOffset, signal);
            case KIND_SIGNAL:
            case KIND_ATOMIC_ADD:
                return name + " " + signal;
            case KIND_FLUSH:
                return name;
            default:
                return name + (kind == KIND_NOP ? " cookie " + cookie : "");
        }
    }
}

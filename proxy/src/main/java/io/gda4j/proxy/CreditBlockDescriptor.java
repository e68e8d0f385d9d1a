package io.gda4j.proxy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Byte layout of the credit block that each side of a verbs proxy link keeps for its peer, in host memory registered
 * with the side's NIC for remote writes. Both words are written only by the peer's NIC (an 8-byte inline RDMA WRITE,
 * one store) and read only by this side's proxy thread.
 *
 * <pre>
 *   0                 8                 16                                                64
 *   +-----------------+-----------------+-------------------------------------------------+
 *   | granted         | delivered       | reserved (zero)                                 |
 *   +-----------------+-----------------+-------------------------------------------------+
 * </pre>
 * <ul>
 *   <li>{@code granted}: how many messages the peer (the receiver of this side's data) lets this side post in all,
 *       cumulative. This side's sender posts a message only while its count of posted messages is below it.</li>
 *   <li>{@code delivered}: how many messages the peer (as a sender) had posted to this side, cumulative, written
 *       behind those messages on the same QP, so when this side reads N, the N messages before it were executed. This
 *       side, as the receiver, grants {@code delivered + window} in return.</li>
 * </ul>
 * Little-endian words ({@code LONGS}): the proxy threads read them with {@code getAcquire}, pairing with the NIC's
 * ordered placement of the inline WRITE behind the data it follows.
 */
public final class CreditBlockDescriptor {
    public static final int GRANTED_OFFSET = 0;
    public static final int DELIVERED_OFFSET = 8;
    public static final int LENGTH = 64;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);

    private CreditBlockDescriptor() {
    }

    /** The {@code granted} word (acquire); pairs with the peer NIC's WRITE of it. */
    public static long grantedAcquire(ByteBuffer block) {
        return (long) LONGS.getAcquire(block, GRANTED_OFFSET);
    }

    /** The {@code delivered} word (acquire); pairs with the peer NIC's WRITE of it behind its data. */
    public static long deliveredAcquire(ByteBuffer block) {
        return (long) LONGS.getAcquire(block, DELIVERED_OFFSET);
    }

    /** Encodes {@code value} as the 8 payload bytes of the inline WRITE that sets a word (little-endian). */
    public static void encodeWord(byte[] payload, long value) {
        for (int i = 0; i < 8; i++) {
            payload[i] = (byte) (value >>> (8 * i));
        }
    }
}

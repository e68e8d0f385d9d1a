package io.gda4j.proxy;

import io.gda4j.nic.NicAccess;
import io.gda4j.nic.RcEndpoints;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * One rank's verbs offer to the ranks of other processes (layout: {@link VerbsOfferDescriptor}).
 *
 * @param heapRkey       the rkey of its heap registration
 * @param heapAddress    its heap as its own process addresses it
 * @param heapBytes      the registered length of its heap
 * @param heapAccess     the rights its heap was registered with
 * @param creditsRkey    the rkey of its credit blocks
 * @param creditsAddress its credit blocks as its own process addresses them
 * @param creditBlocks   how many blocks: one per rank of the world
 * @param creditsHandle  how another process maps the credit blocks ({@link CrossProcessMemory#open}); empty over a
 *                       NIC that connects by QP number, whose peer reaches them by rkey
 * @param lockHandle     how another process maps its heap's atomic lock line; empty as the credits handle
 * @param endpoints      the RC QPs it created for its pairs, by the other rank of each pair
 *                       ({@link io.gda4j.nic.RcExchange}); empty for the emulated NIC
 */
public record VerbsOffer(int heapRkey, long heapAddress, long heapBytes, Set<NicAccess> heapAccess, int creditsRkey,
                         long creditsAddress, int creditBlocks, byte[] creditsHandle, byte[] lockHandle,
                         RcEndpoints endpoints) {

    /** An offer of the emulated NIC: no endpoints. */
    public VerbsOffer(int heapRkey, long heapAddress, long heapBytes, Set<NicAccess> heapAccess, int creditsRkey,
                      long creditsAddress, int creditBlocks, byte[] creditsHandle, byte[] lockHandle) {
        this(heapRkey, heapAddress, heapBytes, heapAccess, creditsRkey, creditsAddress, creditBlocks, creditsHandle,
                lockHandle, RcEndpoints.NONE);
    }

    public VerbsOffer {
        Objects.requireNonNull(endpoints, "endpoints");
        heapAccess = Set.copyOf(heapAccess);
        creditsHandle = checkHandle(creditsHandle, "credits");
        lockHandle = checkHandle(lockHandle, "lock");
        if (creditBlocks < 1) {
            throw new IllegalArgumentException("an offer needs a credit block per rank, got " + creditBlocks);
        }
    }

    private static byte[] checkHandle(byte[] handle, String what) {
        if (handle.length > VerbsOfferDescriptor.MAX_HANDLE_BYTES) {
            throw new IllegalArgumentException("a " + what + " handle of " + handle.length + " bytes: at most "
                    + VerbsOfferDescriptor.MAX_HANDLE_BYTES);
        }
        return handle.clone();
    }

    @Override
    public byte[] creditsHandle() {
        return creditsHandle.clone();
    }

    @Override
    public byte[] lockHandle() {
        return lockHandle.clone();
    }

    /** The credit block the offering rank keeps for {@code rank}, as the offering process addresses it. */
    public long creditBlockFor(int rank) {
        if (rank < 0 || rank >= creditBlocks) {
            throw new IllegalArgumentException("rank " + rank + " has no credit block among " + creditBlocks);
        }
        return creditsAddress + (long) rank * CreditBlockDescriptor.LENGTH;
    }

    /** Bytes of all the credit blocks. */
    public int creditsBytes() {
        return creditBlocks * CreditBlockDescriptor.LENGTH;
    }

    public byte[] encode() {
        int access = NicAccess.offerBits(heapAccess);
        ByteBuffer b = ByteBuffer.allocate(VerbsOfferDescriptor.length(creditsHandle.length, lockHandle.length)
                        + endpoints.encodedBytes())
                .putInt(VerbsOfferDescriptor.MAGIC).putShort(VerbsOfferDescriptor.VERSION).putShort((short) access)
                .putInt(heapRkey).putLong(heapAddress).putLong(heapBytes).putInt(creditsRkey).putLong(creditsAddress)
                .putInt(creditBlocks).putShort((short) creditsHandle.length).put(creditsHandle)
                .putShort((short) lockHandle.length).put(lockHandle);
        endpoints.encodeTo(b);
        return b.array();
    }

    /**
     * Reads what {@code from} published.
     *
     * @throws ProxyException naming {@code from} when the bytes are not an offer of this version
     */
    public static VerbsOffer decode(String from, byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        try {
            int magic = b.getInt();
            short version = b.getShort();
            if (magic != VerbsOfferDescriptor.MAGIC || version != VerbsOfferDescriptor.VERSION) {
                throw new ProxyException(String.format(Locale.ROOT, "%s published no verbs proxy offer of version %d"
                        + " (magic 0x%08x, version %d): every process of a job must run the same gda4j version", from,
                        VerbsOfferDescriptor.VERSION, magic, version));
            }
            int flags = Short.toUnsignedInt(b.getShort());
            if (NicAccess.unknownOfferBits(flags) != 0) {
                throw new ProxyException(String.format(Locale.ROOT, "%s's verbs proxy offer names unknown access bits"
                        + " 0x%x", from, NicAccess.unknownOfferBits(flags)));
            }
            Set<NicAccess> access = NicAccess.ofOfferBits(flags);
            int heapRkey = b.getInt();
            long heapAddress = b.getLong();
            long heapBytes = b.getLong();
            int creditsRkey = b.getInt();
            long creditsAddress = b.getLong();
            int creditBlocks = b.getInt();
            byte[] creditsHandle = handle(b, from, "credits");
            byte[] lockHandle = handle(b, from, "lock");
            RcEndpoints endpoints;
            try {
                endpoints = RcEndpoints.decodeFrom(from, b);
            } catch (IllegalArgumentException e) {
                throw new ProxyException(e.getMessage() + " (in its verbs proxy offer)", e);
            }
            if (b.hasRemaining()) {
                throw new ProxyException(from + "'s verbs proxy offer has " + b.remaining()
                        + " bytes after its last field");
            }
            if (creditBlocks < 1) {
                throw new ProxyException(from + "'s verbs proxy offer has " + creditBlocks + " credit blocks");
            }
            return new VerbsOffer(heapRkey, heapAddress, heapBytes, access, creditsRkey, creditsAddress, creditBlocks,
                    creditsHandle, lockHandle, endpoints);
        } catch (BufferUnderflowException e) {
            throw new ProxyException(from + "'s verbs proxy offer of " + bytes.length + " bytes is cut short", e);
        }
    }

    private static byte[] handle(ByteBuffer b, String from, String what) {
        int length = Short.toUnsignedInt(b.getShort());
        if (length > VerbsOfferDescriptor.MAX_HANDLE_BYTES) {
            throw new ProxyException(from + "'s verbs proxy offer has a " + what + " handle of " + length
                    + " bytes: at most " + VerbsOfferDescriptor.MAX_HANDLE_BYTES);
        }
        byte[] h = new byte[length];
        b.get(h);
        return h;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof VerbsOffer v && heapRkey == v.heapRkey && heapAddress == v.heapAddress
                && heapBytes == v.heapBytes && heapAccess.equals(v.heapAccess) && creditsRkey == v.creditsRkey
                && creditsAddress == v.creditsAddress && creditBlocks == v.creditBlocks
                && Arrays.equals(creditsHandle, v.creditsHandle) && Arrays.equals(lockHandle, v.lockHandle)
                && endpoints.equals(v.endpoints);
    }

    @Override
    public int hashCode() {
        return Objects.hash(heapRkey, heapAddress, heapBytes, creditsRkey, creditsAddress, creditBlocks);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "VerbsOffer[heap rkey 0x%08x at 0x%x +%d %s, %d credit blocks rkey 0x%08x at"
                + " 0x%x, %d RC endpoints]", heapRkey, heapAddress, heapBytes, heapAccess, creditBlocks, creditsRkey,
                creditsAddress, endpoints.byRank().size());
    }
}

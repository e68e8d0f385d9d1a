package io.gda4j.ibgda;

import io.gda4j.nic.NicAccess;
import io.gda4j.nic.RcEndpoints;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;
import java.util.Set;

/**
 * One rank's ibgda offer to the ranks of other processes (layout: {@link ProcessOfferDescriptor}).
 *
 * @param heapRkey     the rkey of its heap on its NIC
 * @param heapAddress  its heap as its own process addresses it (WQEs name these addresses)
 * @param heapBytes    its heap size
 * @param heapAccess   the rights its heap was registered with
 * @param lockOffset   where the atomic lock line lies in its NIC words (emulated NIC; 0 otherwise)
 * @param wordsHandle  the CUDA IPC handle of its NIC words (emulated NIC; zero otherwise)
 * @param endpoints    the RC QPs it created for its pairs, by the other rank of each pair (a NIC that connects by QP
 *                     number; empty for the emulated NIC)
 */
record ProcessOffer(int heapRkey, long heapAddress, long heapBytes, Set<NicAccess> heapAccess, int lockOffset,
                    byte[] wordsHandle, RcEndpoints endpoints) {

    /** An offer of the emulated NIC: no endpoints. */
    ProcessOffer(int heapRkey, long heapAddress, long heapBytes, Set<NicAccess> heapAccess, int lockOffset,
                 byte[] wordsHandle) {
        this(heapRkey, heapAddress, heapBytes, heapAccess, lockOffset, wordsHandle, RcEndpoints.NONE);
    }

    ProcessOffer {
        if (wordsHandle.length != ProcessOfferDescriptor.WORDS_HANDLE_BYTES) {
            throw new IllegalArgumentException("an IPC handle has " + ProcessOfferDescriptor.WORDS_HANDLE_BYTES
                    + " bytes, not " + wordsHandle.length);
        }
        heapAccess = Set.copyOf(heapAccess);
        wordsHandle = wordsHandle.clone();
        Objects.requireNonNull(endpoints, "endpoints");
    }

    @Override
    public byte[] wordsHandle() {
        return wordsHandle.clone();
    }

    byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(ProcessOfferDescriptor.ENDPOINTS_OFFSET + endpoints.encodedBytes())
                .putInt(ProcessOfferDescriptor.MAGIC).putShort(ProcessOfferDescriptor.VERSION)
                .putShort((short) NicAccess.offerBits(heapAccess)).putInt(heapRkey).putLong(heapAddress)
                .putLong(heapBytes).putInt(lockOffset).put(wordsHandle);
        endpoints.encodeTo(b);
        return b.array();
    }

    /**
     * Reads what {@code from} published.
     *
     * @throws IllegalArgumentException naming {@code from} when the bytes are not an offer of this version
     */
    static ProcessOffer decode(String from, byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        try {
            int magic = b.getInt();
            short version = b.getShort();
            if (magic != ProcessOfferDescriptor.MAGIC || version != ProcessOfferDescriptor.VERSION) {
                throw new IllegalArgumentException(String.format("%s published no ibgda offer of version %d (magic"
                        + " 0x%08x, version %d): every process of a job must run the same gda4j version", from,
                        ProcessOfferDescriptor.VERSION, magic, version));
            }
            int flags = Short.toUnsignedInt(b.getShort());
            if (NicAccess.unknownOfferBits(flags) != 0) {
                throw new IllegalArgumentException(String.format("%s's ibgda offer names unknown access bits 0x%x",
                        from, NicAccess.unknownOfferBits(flags)));
            }
            Set<NicAccess> access = NicAccess.ofOfferBits(flags);
            int rkey = b.getInt();
            long address = b.getLong();
            long bytesOfHeap = b.getLong();
            int lockOffset = b.getInt();
            byte[] handle = new byte[ProcessOfferDescriptor.WORDS_HANDLE_BYTES];
            b.get(handle);
            RcEndpoints endpoints = RcEndpoints.decodeFrom(from, b);
            if (b.hasRemaining()) {
                throw new IllegalArgumentException(from + "'s ibgda offer has " + b.remaining()
                        + " bytes after its last field");
            }
            return new ProcessOffer(rkey, address, bytesOfHeap, access, lockOffset, handle, endpoints);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException(from + "'s ibgda offer of " + bytes.length + " bytes is cut short", e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ProcessOffer p && heapRkey == p.heapRkey && heapAddress == p.heapAddress
                && heapBytes == p.heapBytes && heapAccess.equals(p.heapAccess) && lockOffset == p.lockOffset
                && Arrays.equals(wordsHandle, p.wordsHandle) && endpoints.equals(p.endpoints);
    }

    @Override
    public int hashCode() {
        return Objects.hash(heapRkey, heapAddress, heapBytes);
    }

    @Override
    public String toString() {
        return String.format("ProcessOffer[heap rkey 0x%08x at 0x%x +%d %s, lock at words+%d, %d RC endpoints]",
                heapRkey, heapAddress, heapBytes, heapAccess, lockOffset, endpoints.byRank().size());
    }
}

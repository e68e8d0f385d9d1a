package io.gda4j.nic.emulated;

import io.gda4j.nic.NicAccess;

import java.util.Set;

/**
 * The responder side of an emulated RC connection to a rank of another process of this host, as the requester's
 * engine sees it. On hardware the responder's NIC checks each rkey and range against its own table and executes the
 * access; here the requester's engine does both for it, against a copy of the regions the responder's NIC registered
 * (keys and addresses as the responder made them, published over the bootstrap) and through the CUDA IPC mapping of
 * its memory ({@code mappedAddress}). So a bad rkey or range is the same error CQE as within one process, and the WQE
 * bytes carry the responder's own addresses, as they would on the wire.
 *
 * <p>No responder QP takes part: the emulated responder has no receive queue and no state of its own besides its
 * table and its atomic lock ({@link EmulatedNic#serializeAtomics}). Closing it makes later WQEs fail with
 * {@link EmulatedFault#PEER_UNREACHABLE}, as a peer that went away does.
 */
public final class RemoteResponder implements AutoCloseable {
    private final RegistrationTable table = new RegistrationTable();
    private final String description;
    private volatile boolean closed;

    /** @param description "rank 1 (pid 4242 on node7, GPU ...)", for faults */
    public RemoteResponder(String description) {
        this.description = description;
    }

    /**
     * Adds a region the responder registered: {@code key} and {@code ownerAddress} as its NIC made and addresses
     * them, {@code mappedAddress} where this process reaches its first byte, {@code atomicLock} the responder's word
     * that serialises strict atomics on it across processes (as this process addresses it; 0: none).
     */
    public void addRegion(int key, long ownerAddress, long lengthBytes, Set<NicAccess> access, long mappedAddress,
                          long atomicLock, String label) {
        table.addForeign(key, ownerAddress, lengthBytes, access, description + " " + label,
                mappedAddress - ownerAddress, atomicLock);
    }

    RegistrationTable table() {
        return table;
    }

    boolean isClosed() {
        return closed;
    }

    public String description() {
        return description;
    }

    /** Later WQEs toward the responder fail as to a peer that went away; idempotent. */
    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "responder " + description + (closed ? " (closed)" : "");
    }
}

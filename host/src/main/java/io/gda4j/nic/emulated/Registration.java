package io.gda4j.nic.emulated;

import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;

import java.util.Set;

/**
 * One entry of the emulated NIC's {@link RegistrationTable}: a registered region, or the null region; or, in a
 * {@link RemoteResponder}'s table, a region another process registered, which this process reaches at
 * {@code address + translation} (its CUDA IPC mapping) while WQEs name it by the owner's own addresses, as on the wire.
 */
final class Registration implements NicMemory {
    private final RegistrationTable table;
    private final int key;
    private final long address;
    private final long lengthBytes;
    private final Set<NicAccess> access;
    private final MemoryKind kind;
    private final boolean nullRegion;
    private final String label;
    final boolean localWrite;
    final boolean remoteWrite;
    final boolean remoteRead;
    final boolean remoteAtomic;
    /** Registered with relaxed ordering: this NIC's writes into it may become visible out of order. */
    final boolean relaxed;
    /** What to add to an address of this region to get the address the executor uses (0 but for other processes'). */
    final long translation;
    /**
     * The GPU word that serialises strict atomics on this region with those of other processes' NICs (0: none, the
     * NIC-wide chain alone suffices); set before any QP can name the region ({@link EmulatedNic#serializeAtomics}).
     */
    volatile long atomicLock;

    Registration(RegistrationTable table, int key, long address, long lengthBytes, Set<NicAccess> access,
                 MemoryKind kind, boolean nullRegion, String label) {
        this(table, key, address, lengthBytes, access, kind, nullRegion, label, 0, 0);
    }

    Registration(RegistrationTable table, int key, long address, long lengthBytes, Set<NicAccess> access,
                 MemoryKind kind, boolean nullRegion, String label, long translation, long atomicLock) {
        this.table = table;
        this.translation = translation;
        this.atomicLock = atomicLock;
        this.key = key;
        this.address = address;
        this.lengthBytes = lengthBytes;
        this.access = access;
        this.kind = kind;
        this.nullRegion = nullRegion;
        this.label = label;
        this.localWrite = access.contains(NicAccess.LOCAL_WRITE);
        this.remoteWrite = access.contains(NicAccess.REMOTE_WRITE);
        this.remoteRead = access.contains(NicAccess.REMOTE_READ);
        this.remoteAtomic = access.contains(NicAccess.REMOTE_ATOMIC);
        this.relaxed = access.contains(NicAccess.RELAXED_ORDERING);
    }

    int key() {
        return key;
    }

    MemoryKind kind() {
        return kind;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long lengthBytes() {
        return lengthBytes;
    }

    @Override
    public int lkey() {
        return key;
    }

    @Override
    public int rkey() {
        return nullRegion ? 0 : key;
    }

    @Override
    public Set<NicAccess> access() {
        return access;
    }

    @Override
    public boolean isNull() {
        return nullRegion;
    }

    @Override
    public String label() {
        return label;
    }

    /** Deregisters (the null region stays: the NIC owns it). */
    @Override
    public void close() {
        if (!nullRegion) {
            table.remove(this);
        }
    }

    @Override
    public String toString() {
        return String.format("%s: %s [0x%x, +%d) key 0x%08x %s", label, nullRegion ? "null region" : kind, address,
                lengthBytes, key, access);
    }
}

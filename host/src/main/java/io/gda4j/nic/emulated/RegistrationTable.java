package io.gda4j.nic.emulated;

import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicException;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The emulated NIC's memory keys: a key is {@code tag << 24 | slot << 8 | generation}, so a lookup is one array load
 * and a compare (no allocation, no hashing on the engine's path), a key of a deregistered region stops matching even
 * when its slot is reused, and a key made by another NIC (another tag) matches nothing here, as a key of another
 * NIC's protection domain does on hardware. lkey and rkey are the same number, as on mlx5.
 *
 * <p>Writers (set-up threads) are serialised and publish a fresh array through a volatile field; the engine reads
 * the array it loaded at the start of a WQE. One table is one protection domain: any region registered in it can be
 * named from any QP of its NIC, and from a peer QP only through the rkey the responder's own table holds.
 */
final class RegistrationTable {
    private static final int MAX_SLOTS = 1 << 16;

    private final int tag;
    private volatile Registration[] slots = new Registration[16];
    private int generation = 0x5a;

    /** @param tag the NIC's key tag, 1 to 255: the top byte of every key this table makes */
    RegistrationTable(int tag) {
        if (tag < 1 || tag > 0xff) {
            throw new IllegalArgumentException("key tag " + tag);
        }
        this.tag = tag;
    }

    /** A table that only holds regions entered by {@link #addForeign} (a responder in another process). */
    RegistrationTable() {
        this(0xff);
    }

    private static int slotOf(int key) {
        return (key >>> 8) & (MAX_SLOTS - 1);
    }

    /** Registers a region; slot 0 is never used, so key 0 is never valid. */
    synchronized Registration add(long address, long lengthBytes, Set<NicAccess> access, MemoryKind kind,
                                  boolean nullRegion, String label) {
        Registration[] current = slots;
        int slot = 1;
        while (slot < current.length && current[slot] != null) {
            slot++;
        }
        if (slot >= MAX_SLOTS) {
            throw new NicException("the emulated NIC holds at most " + (MAX_SLOTS - 1) + " registrations");
        }
        Registration[] next = java.util.Arrays.copyOf(current, Math.max(current.length, slot < current.length
                ? current.length : current.length * 2));
        generation = (generation + 0x3b) & 0xff;
        Registration r = new Registration(this, tag << 24 | slot << 8 | generation, address, lengthBytes, access, kind,
                nullRegion, label);
        next[slot] = r;
        slots = next;
        return r;
    }

    /**
     * Enters a region that another process's NIC registered under {@code key} ({@link RemoteResponder}): the key is
     * the owner's, so the requester checks it as the owner's NIC would.
     */
    synchronized Registration addForeign(int key, long address, long lengthBytes, Set<NicAccess> access,
                                         String label, long translation, long atomicLock) {
        int slot = slotOf(key);
        if (slot == 0) {
            throw new NicException(String.format("key 0x%08x is not an emulated NIC's key", key));
        }
        Registration[] current = slots;
        if (slot < current.length && current[slot] != null) {
            throw new NicException(String.format("key 0x%08x entered twice", key));
        }
        Registration[] next = java.util.Arrays.copyOf(current, Math.max(current.length,
                Integer.highestOneBit(slot) << 1));
        Registration r = new Registration(this, key, address, lengthBytes, access, MemoryKind.DEVICE, false, label,
                translation, atomicLock);
        next[slot] = r;
        slots = next;
        return r;
    }

    synchronized void remove(Registration r) {
        int slot = slotOf(r.key());
        Registration[] current = slots;
        if (slot < current.length && current[slot] == r) {
            Registration[] next = current.clone();
            next[slot] = null;
            slots = next;
        }
    }

    /** The region with this key, or null. */
    Registration find(int key) {
        Registration[] current = slots;
        int slot = slotOf(key);
        if (slot == 0 || slot >= current.length) {
            return null;
        }
        Registration r = current[slot];
        return r != null && r.key() == key ? r : null;
    }

    /** Open registrations (for close and diagnostics). */
    synchronized List<Registration> all() {
        List<Registration> list = new ArrayList<>();
        for (Registration r : slots) {
            if (r != null) {
                list.add(r);
            }
        }
        return list;
    }
}

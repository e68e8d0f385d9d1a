package io.gda4j.nic.emulated;

import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicException;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The emulated NIC's memory keys: a key is {@code slot << 8 | generation}, so a lookup is one array load and a
 * compare (no allocation, no hashing on the engine's path), and a key of a deregistered region stops matching even
 * when its slot is reused. lkey and rkey are the same number, as on mlx5.
 *
 * <p>Writers (set-up threads) are serialised and publish a fresh array through a volatile field; the engine reads
 * the array it loaded at the start of a WQE. The emulated NIC models one protection domain: any registered region
 * can be named from any QP of the NIC.
 */
final class RegistrationTable {
    private static final int MAX_SLOTS = 1 << 16;

    private volatile Registration[] slots = new Registration[16];
    private int generation = 0x5a;

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
        Registration r = new Registration(this, slot << 8 | generation, address, lengthBytes, access, kind,
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
        int slot = key >>> 8;
        if (slot == 0 || slot >= MAX_SLOTS) {
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
        int slot = r.key() >>> 8;
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
        int slot = key >>> 8;
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

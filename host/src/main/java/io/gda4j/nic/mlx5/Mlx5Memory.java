package io.gda4j.nic.mlx5;

import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicMemory;
import io.gda4j.verbs.MemoryRegion;
import io.gda4j.verbs.VerbsException;

import java.util.Set;

/**
 * A region registered with an {@link Mlx5Nic}: an {@code ibv_mr} (host memory, GPU memory by dma-buf or
 * nvidia-peermem) or the NIC's null MR. Reports the range that was asked for; the MR may cover more (a dma-buf
 * registration covers whole host pages).
 */
final class Mlx5Memory implements NicMemory {
    private final Mlx5Nic nic;
    private final MemoryRegion region;
    private final long address;
    private final long lengthBytes;
    private final Set<NicAccess> access;
    private final String label;
    private final boolean isNull;

    Mlx5Memory(Mlx5Nic nic, MemoryRegion region, long address, long lengthBytes, Set<NicAccess> access,
               String label, boolean isNull) {
        this.nic = nic;
        this.region = region;
        this.address = address;
        this.lengthBytes = lengthBytes;
        this.access = Set.copyOf(access);
        this.label = label;
        this.isNull = isNull;
    }

    /** The verbs MR, for the loopback test and the transport's diagnostics. */
    MemoryRegion region() {
        return region;
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
        return region.lkey();
    }

    @Override
    public int rkey() {
        return isNull ? 0 : region.rkey();
    }

    @Override
    public Set<NicAccess> access() {
        return access;
    }

    @Override
    public boolean isNull() {
        return isNull;
    }

    @Override
    public String label() {
        return label;
    }

    /** Deregisters ({@code ibv_dereg_mr}); the null region belongs to the NIC and stays. Idempotent. */
    @Override
    public void close() {
        if (isNull) {
            return;
        }
        nic.forget(this);
        closeRegion();
    }

    /** Deregisters whatever this is; called by {@link #close()} and by the NIC when it closes. */
    void closeRegion() {
        try {
            region.close();
        } catch (VerbsException e) {
            throw new NicException(label + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return String.format("%s (%s, lkey 0x%08x, rkey 0x%08x, [0x%x, +%d) on %s)", label,
                isNull ? "null MR" : region.kind() + " MR", lkey(), rkey(), address, lengthBytes, nic.deviceName());
    }
}

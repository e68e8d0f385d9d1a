package io.gda4j.verbs;

import com.sun.jna.Pointer;

import java.util.List;

/**
 * A registered memory region ({@code struct ibv_mr *}): its lkey goes into local data segments, its rkey to the
 * peer for remote access. Keys and range are read once at registration.
 */
public final class MemoryRegion extends VerbsResource {
    /** How the region was made. */
    public enum Kind {
        /** {@code ibv_reg_mr}: host or host-mapped memory. */
        HOST,
        /** {@code ibv_reg_dmabuf_mr}: memory exported as a dma-buf, typically GPU memory. */
        DMABUF,
        /** {@code ibv_alloc_null_mr}: discards writes; only its lkey is meaningful. */
        NULL
    }

    private final ProtectionDomain pd;
    private final Kind kind;
    private final long address;
    private final long lengthBytes;
    private final int lkey;
    private final int rkey;

    MemoryRegion(ProtectionDomain pd, long handle, Kind kind) {
        super(pd.context().registry(), handle, List.of(pd));
        this.pd = pd;
        this.kind = kind;
        Pointer mr = new Pointer(handle);
        this.address = mr.getLong(IbvMrDescriptor.ADDR_OFFSET);
        this.lengthBytes = mr.getLong(IbvMrDescriptor.LENGTH_OFFSET);
        this.lkey = mr.getInt(IbvMrDescriptor.LKEY_OFFSET);
        this.rkey = mr.getInt(IbvMrDescriptor.RKEY_OFFSET);
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    public Kind kind() {
        return kind;
    }

    /** {@code ibv_mr.addr}: the registered start (for a dma-buf MR, what the provider reports). */
    public long address() {
        return address;
    }

    /** {@code ibv_mr.length} in bytes (unsigned; a null MR may report SIZE_MAX). */
    public long lengthBytes() {
        return lengthBytes;
    }

    public int lkey() {
        return lkey;
    }

    public int rkey() {
        return rkey;
    }

    @Override
    public String toString() {
        return String.format("%s MR lkey 0x%08x rkey 0x%08x [0x%x, +%d) on %s", kind, lkey, rkey, address,
                lengthBytes, pd.context().deviceName());
    }

    @Override
    void destroy(long nativeHandle) {
        int rc = LibIbverbs.ibv_dereg_mr(nativeHandle);
        if (rc != 0) {
            throw VerbsException.failed("ibv_dereg_mr(" + this + ")", VerbsException.errnoOf(rc),
                    "An MR bound to a memory window cannot be deregistered until the window is freed.");
        }
    }
}

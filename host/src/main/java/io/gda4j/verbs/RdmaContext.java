package io.gda4j.verbs;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.util.ArrayList;
import java.util.List;

/**
 * An open RDMA device ({@code struct ibv_context *}): queries, and the root of every resource made on it.
 *
 * <p>Closing it closes, newest first, every {@link ProtectionDomain}, {@link MemoryRegion},
 * {@link CompletionQueue} and {@link QueuePair} still open on it, then the device. Closing twice does nothing.
 */
public final class RdmaContext implements AutoCloseable {
    private final ResourceRegistry registry = new ResourceRegistry();
    private final String deviceName;
    private final long handle;
    private boolean closed;

    private RdmaContext(String deviceName, long handle) {
        this.deviceName = deviceName;
        this.handle = handle;
    }

    /** Opens the device named {@code deviceName} (e.g. {@code mlx5_0}). */
    public static RdmaContext open(String deviceName) {
        return openMatching(deviceName);
    }

    /** Opens the first device libibverbs lists. */
    public static RdmaContext openFirst() {
        return openMatching(null);
    }

    private static RdmaContext openMatching(String wanted) {
        if (!LibIbverbs.isAvailable()) {
            throw new VerbsException(Verbs.status().sentence(), 0);
        }
        int[] count = new int[1];
        long list = LibIbverbs.ibv_get_device_list(count);
        if (list == 0) {
            throw new VerbsException("cannot open an RDMA device: " + Verbs.status().sentence(),
                    Native.getLastError());
        }
        try {
            List<String> names = new ArrayList<>();
            for (int i = 0; i < count[0]; i++) {
                long device = new Pointer(list).getLong((long) i * Native.POINTER_SIZE);
                String name = RdmaDevices.name(device);
                names.add(name);
                if (wanted == null || wanted.equals(name)) {
                    long context = LibIbverbs.ibv_open_device(device);
                    if (context == 0) {
                        throw VerbsException.failed("ibv_open_device(" + name + ")", Native.getLastError(),
                                "Check that this user may open /dev/infiniband/uverbs* and that the device's"
                                        + " provider library (libmlx5 for mlx5) is installed.");
                    }
                    return new RdmaContext(name, context);
                }
            }
            throw new VerbsException(wanted == null ? "cannot open an RDMA device: " + Verbs.status().sentence()
                    : "no RDMA device named " + wanted + "; this machine has " + names, Errno.ENODEV);
        } finally {
            LibIbverbs.ibv_free_device_list(list);
        }
    }

    public String deviceName() {
        return deviceName;
    }

    /** The {@code struct ibv_context *}; throws once closed. */
    public long handle() {
        requireOpen();
        return handle;
    }

    /** {@code ibv_query_device}. */
    public DeviceAttributes queryDevice() {
        try (Memory attr = new Memory(IbvDeviceAttrDescriptor.SIZE)) {
            attr.clear();
            int rc = LibIbverbs.ibv_query_device(handle(), Pointer.nativeValue(attr));
            if (rc != 0) {
                throw VerbsException.failed("ibv_query_device(" + deviceName + ")", VerbsException.errnoOf(rc), "");
            }
            return DeviceAttributes.read(attr);
        }
    }

    /** {@code ibv_query_port} for port {@code portNum} (ports count from 1). */
    public PortAttributes queryPort(int portNum) {
        byte port = portByte(portNum);
        try (Memory attr = new Memory(IbvPortAttrDescriptor.SIZE)) {
            attr.clear(); // the compat symbol fills only a prefix; the rest must read as zero
            int rc = LibIbverbs.ibv_query_port(handle(), port, Pointer.nativeValue(attr));
            if (rc != 0) {
                throw VerbsException.failed("ibv_query_port(" + deviceName + ", port " + portNum + ")",
                        VerbsException.errnoOf(rc), "Ports are numbered from 1 to the device's phys_port_cnt.");
            }
            return PortAttributes.read(attr);
        }
    }

    /** {@code ibv_query_gid}: the GID at {@code gidIndex} of port {@code portNum}. */
    public Gid queryGid(int portNum, int gidIndex) {
        byte port = portByte(portNum);
        try (Memory gid = new Memory(IbvGidDescriptor.SIZE)) {
            gid.clear();
            int rc = LibIbverbs.ibv_query_gid(handle(), port, gidIndex, Pointer.nativeValue(gid));
            if (rc != 0) {
                throw VerbsException.failed("ibv_query_gid(" + deviceName + ", port " + portNum + ", index "
                                + gidIndex + ")", VerbsException.errnoOf(rc),
                        "The index must be below the port's gid_tbl_len; on RoCE the usable ones are those"
                                + " show_gids lists (RoCE v2 with an IP address).");
            }
            return Gid.of(gid.getByteArray(IbvGidDescriptor.RAW_OFFSET, IbvGidDescriptor.SIZE));
        }
    }

    /** {@code ibv_alloc_pd}. */
    public ProtectionDomain allocateProtectionDomain() {
        long pd = LibIbverbs.ibv_alloc_pd(handle());
        if (pd == 0) {
            throw VerbsException.failed("ibv_alloc_pd(" + deviceName + ")", Native.getLastError(), "");
        }
        return new ProtectionDomain(this, pd);
    }

    /**
     * {@code ibv_create_cq} with room for at least {@code minEntries} completions (no completion channel: gda4j
     * polls). {@link CompletionQueue#capacity()} says what the provider granted.
     */
    public CompletionQueue createCompletionQueue(int minEntries) {
        if (minEntries < 1) {
            throw new IllegalArgumentException("a CQ needs at least 1 entry, not " + minEntries);
        }
        long cq = LibIbverbs.ibv_create_cq(handle(), minEntries, 0L, 0L, 0);
        if (cq == 0) {
            throw VerbsException.failed("ibv_create_cq(" + deviceName + ", " + minEntries + " entries)",
                    Native.getLastError(), "The entry count must not exceed the device's max_cqe.");
        }
        return new CompletionQueue(this, cq);
    }

    /** Resources made on this context and not closed yet. */
    public int openResourceCount() {
        return registry.openCount();
    }

    public boolean isClosed() {
        synchronized (registry) {
            return closed;
        }
    }

    /** Closes every resource still open on this context (newest first), then the device; idempotent. */
    @Override
    public void close() {
        VerbsException failure;
        synchronized (registry) {
            if (closed) {
                return;
            }
            failure = registry.closeAll();
            int rc = LibIbverbs.ibv_close_device(handle);
            closed = true;
            if (rc != 0) {
                VerbsException closeFailure = VerbsException.failed("ibv_close_device(" + deviceName + ")",
                        VerbsException.errnoOf(rc), "");
                if (failure == null) {
                    failure = closeFailure;
                } else {
                    failure.addSuppressed(closeFailure);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "RDMA context " + deviceName;
    }

    ResourceRegistry registry() {
        return registry;
    }

    private void requireOpen() {
        if (isClosed()) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    static byte portByte(int portNum) {
        if (portNum < 1 || portNum > 255) {
            throw new IllegalArgumentException("port numbers run from 1 to 255, not " + portNum);
        }
        return (byte) portNum;
    }
}

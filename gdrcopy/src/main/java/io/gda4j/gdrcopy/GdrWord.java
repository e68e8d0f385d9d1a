package io.gda4j.gdrcopy;

/**
 * The gdrcopy {@link HostWritableGpuWord}: one 8-byte word inside a {@link GdrMapping}, stored to through the
 * mapping's ByteBuffer (a CPU store over PCIe, no CUDA call, no JNA call).
 */
public final class GdrWord implements HostWritableGpuWord {

    /** {@link #backendName()} of this backend. */
    public static final String BACKEND_NAME = "gdrcopy";

    private final GdrMapping mapping;
    private final long offsetBytes;
    private final boolean ownsMapping;
    private volatile boolean closed;

    private GdrWord(GdrMapping mapping, long offsetBytes, boolean ownsMapping) {
        this.mapping = mapping;
        this.offsetBytes = offsetBytes;
        this.ownsMapping = ownsMapping;
    }

    /**
     * Pins and maps the 64 KiB page that starts at {@code deviceAddress} and returns its first word; closing the
     * word unmaps, unpins and closes the gdrcopy handle. See {@link Gdrcopy#map(long, long)} for the alignment the
     * address needs.
     */
    public static GdrWord map(long deviceAddress) {
        GdrMapping mapping = Gdrcopy.map(deviceAddress, Long.BYTES);
        return new GdrWord(mapping, 0, true);
    }

    /**
     * The word at {@code offsetBytes} of an existing mapping, which stays owned by the caller: closing the word does
     * not close the mapping, and the mapping must outlive the word.
     */
    public static GdrWord inside(GdrMapping mapping, long offsetBytes) {
        mapping.checkLongOffset(offsetBytes);
        return new GdrWord(mapping, offsetBytes, false);
    }

    @Override
    public String backendName() {
        return BACKEND_NAME;
    }

    @Override
    public long deviceAddress() {
        return mapping.deviceAddress() + offsetBytes;
    }

    /** The mapping the word lives in. */
    public GdrMapping mapping() {
        return mapping;
    }

    /** See {@link GdrMapping#putLongRelease(long, long)}. */
    @Override
    public void putLongRelease(long value) {
        requireOpen();
        mapping.putLongRelease(offsetBytes, value);
    }

    /** See {@link GdrMapping#getLongAcquire(long)}: a PCIe read, about a microsecond. */
    @Override
    public long getLongAcquire() {
        requireOpen();
        return mapping.getLongAcquire(offsetBytes);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (ownsMapping) {
            mapping.close();
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("this GdrWord is closed");
        }
    }

    @Override
    public String toString() {
        return String.format("GdrWord[0x%x%s]", deviceAddress(), closed ? ", closed" : "");
    }
}

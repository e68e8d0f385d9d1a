package io.gda4j.gdrcopy;

/**
 * Entry points: is gdrcopy usable here ({@link #status()}), and the one-call pin-and-map ({@link #map}).
 *
 * <p>For several buffers on one handle use {@link GdrHandle#open()}, {@link GdrHandle#pin} and
 * {@link GdrPinnedBuffer#map()} directly.
 */
public final class Gdrcopy {

    private Gdrcopy() {
    }

    /**
     * Whether gdrcopy can be used: library, then device node ({@value GdrcopyConfig#DEVICE_DEFAULT} unless
     * {@value GdrcopyConfig#DEVICE_PROP_NAME} says otherwise), then a trial gdr_open. Never throws.
     */
    public static GdrcopyStatus status() {
        return GdrcopyStatus.probe(NativeGdrcopyProbe.INSTANCE, GdrcopyConfig.fromSystemProperties().deviceNode());
    }

    /**
     * libgdrapi's version ({@code gdr_runtime_get_version}).
     *
     * @throws GdrcopyException when the library is not loaded
     */
    public static GdrcopyStatus.Version runtimeVersion() {
        GdrHandle.requireLibrary();
        int[] major = new int[1];
        int[] minor = new int[1];
        LibGdrapi.gdr_runtime_get_version(major, minor);
        return new GdrcopyStatus.Version(major[0], minor[0]);
    }

    /**
     * Opens a handle, pins {@code GpuPages.roundUp(sizeBytes)} bytes from {@code deviceAddress}, maps them, and
     * returns a mapping of {@code sizeBytes} bytes that owns all three: closing it unmaps, unpins and closes.
     *
     * <p>{@code deviceAddress} must be 64 KiB-aligned and the whole pages must lie inside one {@code cuMemAlloc}
     * allocation: allocate {@link GpuPages#overAllocationBytes(long)} bytes, and pass
     * {@link GpuPages#roundUp(long)} of the returned pointer (or use {@link GpuPages#alignedInside}).
     *
     * @throws IllegalArgumentException when the address is not 64 KiB-aligned or the size is not positive
     * @throws GdrcopyException         when gdrcopy is unavailable or a call fails
     */
    public static GdrMapping map(long deviceAddress, long sizeBytes) {
        if (sizeBytes <= 0) {
            throw new IllegalArgumentException("sizeBytes must be positive, got " + sizeBytes);
        }
        if (deviceAddress <= 0) {
            throw new IllegalArgumentException(String.format("device address 0x%x is not a device pointer",
                    deviceAddress));
        }
        if (!GpuPages.isAligned(deviceAddress)) {
            throw new IllegalArgumentException(String.format("device address 0x%x is not aligned to a 64 KiB GPU "
                    + "page: cuMemAlloc GpuPages.overAllocationBytes(%d) = %d bytes, round the returned pointer up "
                    + "with GpuPages.roundUp and map from there (GpuPages.alignedInside does both and checks the fit)",
                    deviceAddress, sizeBytes, GpuPages.overAllocationBytes(sizeBytes)));
        }
        long pinnedBytes = GpuPages.roundUp(sizeBytes);
        GdrHandle handle = GdrHandle.open();
        try {
            GdrPinnedBuffer pinned = handle.pin(deviceAddress, pinnedBytes);
            return pinned.map(sizeBytes).ownPinAndHandle();
        } catch (RuntimeException e) {
            try {
                handle.close();
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }
}

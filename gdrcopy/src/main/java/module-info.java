/**
 * The libgdrapi binding: CPU-mapped GPU memory through gdrcopy, and {@link io.gda4j.gdrcopy.HostWritableGpuWord},
 * the word the host writes and a kernel polls, which gda4j-host's {@code io.gda4j.hostflag} hands out in every
 * backend.
 */
@SuppressWarnings("requires-automatic") // JNA ships no module-info
module io.gda4j.gdrcopy {
    requires com.sun.jna;

    exports io.gda4j.gdrcopy;
}

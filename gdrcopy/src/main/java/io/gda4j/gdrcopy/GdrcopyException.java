package io.gda4j.gdrcopy;

import java.nio.file.Path;
import java.util.Map;

/**
 * A gdrcopy call failed, or gdrcopy cannot be used here. The message says what was attempted and what to do; all
 * advice text lives in the factories below.
 *
 * <p>libgdrapi returns 0 on success and a positive errno value on failure (gdr_open returns NULL instead); the
 * code is kept in {@link #returnCode()} and named in the message when it is a known errno.
 */
public final class GdrcopyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The errno values libgdrapi passes on from its ioctl and mmap calls. */
    private static final Map<Integer, String> ERRNO_NAMES = Map.ofEntries(
            Map.entry(1, "EPERM"), Map.entry(2, "ENOENT"), Map.entry(5, "EIO"), Map.entry(6, "ENXIO"),
            Map.entry(11, "EAGAIN"), Map.entry(12, "ENOMEM"), Map.entry(13, "EACCES"), Map.entry(14, "EFAULT"),
            Map.entry(16, "EBUSY"), Map.entry(19, "ENODEV"), Map.entry(22, "EINVAL"), Map.entry(25, "ENOTTY"),
            Map.entry(28, "ENOSPC"), Map.entry(38, "ENOSYS"), Map.entry(95, "EOPNOTSUPP"));

    private final String call;
    private final int returnCode;

    GdrcopyException(String call, int returnCode, String message) {
        super(message);
        this.call = call;
        this.returnCode = returnCode;
    }

    /** The call that failed, e.g. {@code "gdr_pin_buffer"}; empty when no call was made (library absent). */
    public String call() {
        return call;
    }

    /** What the call returned; 0 when there is no return code (a NULL handle, a library that is not there). */
    public int returnCode() {
        return returnCode;
    }

    /** The symbolic name of an errno value ({@code 22 -> "EINVAL"}; negative values are named by magnitude). */
    static String errnoName(int returnCode) {
        return ERRNO_NAMES.get(Math.abs(returnCode));
    }

    private static String retText(int ret) {
        String name = errnoName(ret);
        return name == null ? "ret " + ret : "ret " + ret + " = " + name;
    }

    private static GdrcopyException failed(String callName, String callText, int ret, String advice) {
        return new GdrcopyException(callName, ret, callText + " failed (" + retText(ret) + "): " + advice);
    }

    static GdrcopyException libraryUnavailable(String sentence) {
        return new GdrcopyException("", 0, sentence + "; use a fallback backend (a stream write or mapped pinned "
                + "memory) or install gdrcopy");
    }

    static GdrcopyException openFailed(Path deviceNode, boolean deviceNodeExists) {
        String why = deviceNodeExists
                ? deviceNode + " exists but could not be used: check that this user can read and write it and that "
                        + "gdrdrv is version 2.0 or newer and matches libgdrapi"
                : deviceNode + " does not exist: load the gdrdrv kernel module (modprobe gdrdrv, or start the "
                        + "gdrcopy service)";
        return new GdrcopyException("gdr_open", 0, "gdr_open() returned NULL: " + why
                + "; GDRCOPY_ENABLE_LOGGING=1 makes libgdrapi print its reason");
    }

    static GdrcopyException closeFailed(int ret) {
        return failed("gdr_close", "gdr_close()", ret,
                "the handle is released anyway; an earlier unpin inside gdr_close may have failed");
    }

    static GdrcopyException pinFailed(long address, long sizeBytes, int ret) {
        return failed("gdr_pin_buffer", String.format("gdr_pin_buffer(0x%x, %d)", address, sizeBytes), ret,
                "the address must be a cuMemAlloc'd device pointer aligned to 64 KiB, the whole 64 KiB pages "
                        + GpuPages.covering(address, sizeBytes) + " must lie inside that one allocation "
                        + "(allocate GpuPages.overAllocationBytes(size) bytes and round the address up), and the "
                        + "allocation must have CU_POINTER_ATTRIBUTE_SYNC_MEMOPS set; ENOMEM or ENOSPC usually "
                        + "means the GPU's BAR1 space is used up (nvidia-smi -q -d MEMORY)");
    }

    static GdrcopyException unpinFailed(long address, int ret) {
        return failed("gdr_unpin_buffer", String.format("gdr_unpin_buffer(0x%x)", address), ret,
                "the pin is released anyway; the device memory may have been freed while it was still pinned");
    }

    static GdrcopyException getInfoFailed(long address, int ret) {
        return failed("gdr_get_info", String.format("gdr_get_info(0x%x)", address), ret,
                "the pinned buffer is no longer valid: was its device memory freed?");
    }

    static GdrcopyException callbackFlagFailed(long address, int ret) {
        return failed("gdr_get_callback_flag", String.format("gdr_get_callback_flag(0x%x)", address), ret,
                "the pinned buffer is no longer valid");
    }

    static GdrcopyException mapFailed(long address, long sizeBytes, int ret) {
        return failed("gdr_map", String.format("gdr_map(0x%x, %d)", address, sizeBytes), ret,
                "mapping the pinned GPU pages into this process failed: EAGAIN means the buffer is already mapped "
                        + "or its device memory was freed meanwhile; ENOMEM or EINVAL usually means BAR1 or the "
                        + "process's address space is exhausted");
    }

    static GdrcopyException unmapFailed(long address, long sizeBytes, int ret) {
        return failed("gdr_unmap", String.format("gdr_unmap(0x%x, %d)", address, sizeBytes), ret,
                "the mapping is treated as gone; the buffer is unpinned next");
    }

    static GdrcopyException copyFailed(String call, long offsetBytes, long sizeBytes, int ret) {
        return failed(call, String.format("%s(offset %d, %d bytes)", call, offsetBytes, sizeBytes), ret,
                "libgdrapi says the buffer is not mapped: was it unmapped or was its device memory freed?");
    }

    static GdrcopyException driverVersionFailed(int ret) {
        return failed("gdr_driver_get_version", "gdr_driver_get_version()", ret,
                "gdrdrv did not answer the version ioctl: it is probably older than 2.0, upgrade gdrcopy's driver");
    }
}

package io.gda4j.gdrcopy;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

import java.util.ArrayList;
import java.util.List;

/**
 * JNA direct mapping of libgdrapi (gdrapi.h, gdrcopy 2.x): primitives and {@code long} handles only.
 *
 * <p>Types: {@code gdr_t} and every {@code void *} are {@code long} addresses; {@code size_t} and
 * {@code unsigned long} are {@code long} (LP64 Linux); {@code gdr_mh_t}, a struct holding one {@code unsigned
 * long} passed by value, is a {@code long}: on x86-64, aarch64 and ppc64le such a struct travels in one integer
 * register exactly like a {@code long}. Out-parameters are one-element arrays.
 *
 * <p>Loading never throws: the class records why the library is unusable ({@link #loadFailure()}) and every caller
 * checks {@link #isLoaded()} first (calling a native method of an unbound class would throw
 * {@link UnsatisfiedLinkError}). {@code gdr_get_info_v2} (gdrcopy 2.4+) is bound separately so older libraries still
 * load; {@link #getInfo} falls back to the v1 symbol.
 */
final class LibGdrapi {

    private static final NativeLibrary LIBRARY;
    private static final String LIBRARY_NAME;
    private static final String LOAD_FAILURE;

    static {
        GdrcopyConfig config = GdrcopyConfig.fromSystemProperties();
        LoadResult result = tryLoad(config.libraryCandidates());
        NativeLibrary library = result.library();
        String failure = result.failure();
        if (library != null) {
            try {
                Native.register(LibGdrapi.class, library);
            } catch (LinkageError | RuntimeException e) {
                failure = library.getName() + " was found but lacks a gdrcopy 2.x function (" + e.getMessage()
                        + "): gdrcopy 2.0 or newer is needed";
                library = null;
            }
        }
        LIBRARY = library;
        LIBRARY_NAME = library != null ? library.getName() : config.libraryName();
        LOAD_FAILURE = failure;
    }

    private LibGdrapi() {
    }

    /** Outcome of looking for the library: the library, or why none of the names loaded. */
    record LoadResult(NativeLibrary library, String failure) {
    }

    /** Tries each name in turn; never throws. */
    static LoadResult tryLoad(List<String> names) {
        List<String> reasons = new ArrayList<>();
        for (String name : names) {
            try {
                return new LoadResult(NativeLibrary.getInstance(name), null);
            } catch (LinkageError | RuntimeException e) {
                reasons.add(name + ": " + firstLine(e.getMessage()));
            }
        }
        return new LoadResult(null, "not found (" + String.join("; ", reasons) + ")");
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "no reason given";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    /** Whether the library loaded and every core function bound. */
    static boolean isLoaded() {
        return LIBRARY != null;
    }

    /** The library loaded, or the first name looked for when none loaded. */
    static String libraryName() {
        return LIBRARY_NAME;
    }

    /** Why the library is unusable; {@code null} when it is loaded. */
    static String loadFailure() {
        return LOAD_FAILURE;
    }

    /**
     * Calls {@code gdr_get_info_v2} when the library has it, else the v1 {@code gdr_get_info}.
     *
     * @param infoAddress {@value GdrInfoDescriptor#SIZE} writable bytes (v1 writes only the first
     *                    {@value GdrInfoDescriptor#V1_SIZE})
     */
    static int getInfo(long g, long mh, long infoAddress) {
        if (InfoV2.BOUND) {
            return InfoV2.gdr_get_info_v2(g, mh, infoAddress);
        }
        return InfoV1.BOUND ? InfoV1.gdr_get_info(g, mh, infoAddress) : ENOSYS;
    }

    /** Returned by {@link #getInfo} when the library exports neither get_info symbol. */
    static final int ENOSYS = 38;

    /** Whether {@link #getInfo} fills the v2 layout (with {@code mapping_type}). */
    static boolean hasGetInfoV2() {
        return InfoV2.BOUND;
    }

    private static boolean bindOptional(Class<?> holder, String symbol) {
        if (LIBRARY == null) {
            return false;
        }
        try {
            LIBRARY.getFunction(symbol);
            Native.register(holder, LIBRARY);
            return true;
        } catch (LinkageError | RuntimeException e) {
            return false;
        }
    }

    /** {@code int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, gdr_info_v2_t *info)}, gdrcopy 2.4+. */
    private static final class InfoV2 {
        static final boolean BOUND = bindOptional(InfoV2.class, "gdr_get_info_v2");

        static native int gdr_get_info_v2(long g, long mh, long info);
    }

    /** {@code int gdr_get_info(gdr_t g, gdr_mh_t handle, gdr_info_v1_t *info)}: the exported v1 symbol. */
    private static final class InfoV1 {
        static final boolean BOUND = bindOptional(InfoV1.class, "gdr_get_info");

        static native int gdr_get_info(long g, long mh, long info);
    }

    /** {@code gdr_t gdr_open(void)}: NULL (0) on failure. */
    static native long gdr_open();

    /** {@code int gdr_close(gdr_t g)}: also unpins every buffer still pinned on {@code g}. */
    static native int gdr_close(long g);

    /**
     * {@code int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size, uint64_t p2p_token, uint32_t va_space,
     * gdr_mh_t *handle)}; {@code p2p_token} and {@code va_space} are 0 for CUDA allocations.
     */
    static native int gdr_pin_buffer(long g, long addr, long size, long p2pToken, int vaSpace, long[] handle);

    /** {@code int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle)}. */
    static native int gdr_unpin_buffer(long g, long mh);

    /** {@code int gdr_get_callback_flag(gdr_t g, gdr_mh_t handle, int *flag)}: set when cuMemFree came first. */
    static native int gdr_get_callback_flag(long g, long mh, int[] flag);

    /** {@code int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size)}. */
    static native int gdr_map(long g, long mh, long[] va, long size);

    /** {@code int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size)}. */
    static native int gdr_unmap(long g, long mh, long va, long size);

    /** {@code int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size)}. */
    static native int gdr_copy_to_mapping(long mh, long mapDPtr, long hPtr, long size);

    /** {@code int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)}. */
    static native int gdr_copy_from_mapping(long mh, long hPtr, long mapDPtr, long size);

    /** {@code void gdr_runtime_get_version(int *major, int *minor)}: libgdrapi's own version. */
    static native void gdr_runtime_get_version(int[] major, int[] minor);

    /** {@code int gdr_driver_get_version(gdr_t g, int *major, int *minor)}: gdrdrv's version. */
    static native int gdr_driver_get_version(long g, int[] major, int[] minor);
}

package io.gda4j.verbs;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

import java.util.ArrayList;
import java.util.List;

/**
 * What RDMA this machine offers, for {@code gda4j info} and for choosing between the real and the emulated NIC.
 *
 * <p>{@link #status()} never throws: it loads libibverbs on its own (not through {@link LibIbverbs}'s registered
 * methods), so it also answers for a library name other than the configured one, which is how the tests simulate
 * a machine without rdma-core.
 */
public final class Verbs {
    private Verbs() {
    }

    /** Probes the configured libibverbs and libmlx5 ({@link LibIbverbs#LIBRARY_PROP_NAME} and friends). */
    public static VerbsStatus status() {
        return probe(LibIbverbs.libraryName(), LibMlx5.libraryName());
    }

    /** Probes the named libraries; package-private so tests can name a library that does not exist. */
    static VerbsStatus probe(String ibverbsLibrary, String mlx5Library) {
        NativeLibrary library;
        try {
            library = NativeLibrary.getInstance(ibverbsLibrary);
        } catch (LinkageError | RuntimeException e) {
            return VerbsStatus.libraryAbsent(ibverbsLibrary, mlx5Library, firstLine(e));
        }
        boolean mlx5 = canLoad(mlx5Library);
        try {
            Function getDeviceList = library.getFunction("ibv_get_device_list");
            Function getDeviceName = library.getFunction("ibv_get_device_name");
            Function freeDeviceList = library.getFunction("ibv_free_device_list");
            List<String> names = new ArrayList<>();
            try (Memory count = new Memory(Integer.BYTES)) {
                count.setInt(0, 0);
                Pointer list = (Pointer) getDeviceList.invoke(Pointer.class, new Object[] {count});
                if (list == null) {
                    int errno = Native.getLastError();
                    return VerbsStatus.noDevice(ibverbsLibrary, mlx5Library, mlx5,
                            "ibv_get_device_list failed with " + Errno.describe(errno) + deviceListHint(errno));
                }
                try {
                    for (int i = 0; i < count.getInt(0); i++) {
                        Pointer device = list.getPointer((long) i * Native.POINTER_SIZE);
                        Pointer name = (Pointer) getDeviceName.invoke(Pointer.class, new Object[] {device});
                        names.add(name == null ? "?" : name.getString(0));
                    }
                } finally {
                    freeDeviceList.invoke(Void.class, new Object[] {list});
                }
            }
            if (names.isEmpty()) {
                return VerbsStatus.noDevice(ibverbsLibrary, mlx5Library, mlx5, "ibv_get_device_list returned none");
            }
            return VerbsStatus.devicesFound(ibverbsLibrary, mlx5Library, mlx5, names);
        } catch (LinkageError | RuntimeException e) {
            return VerbsStatus.libraryAbsent(ibverbsLibrary, mlx5Library,
                    "it loaded but is not a usable libibverbs: " + firstLine(e));
        }
    }

    private static String deviceListHint(int errno) {
        return switch (errno) {
            case Errno.ENOSYS -> ": the kernel exposes no RDMA (uverbs) interface, i.e. no RDMA NIC or driver here";
            case Errno.EPERM, Errno.EACCES -> ": /dev/infiniband is not accessible to this user";
            default -> "";
        };
    }

    private static boolean canLoad(String libraryName) {
        try {
            NativeLibrary.getInstance(libraryName);
            return true;
        } catch (LinkageError | RuntimeException e) {
            return false;
        }
    }

    /**
     * One line from a throwable's message. JNA's load errors read "Unable to load library 'x':" and then one line
     * per place tried, the first being dlopen's own reason, which is the useful one.
     */
    static String firstLine(Throwable t) {
        String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        String[] lines = message.strip().split("\n");
        return (lines[0].endsWith(":") && lines.length > 1 ? lines[1] : lines[0]).strip();
    }

    /** Registers an optional group of symbols; returns why it is unusable, or null. */
    static String registerOptional(Class<?> bindings, NativeLibrary library, String libraryUnavailableReason) {
        if (libraryUnavailableReason != null) {
            return "libibverbs is not usable: " + libraryUnavailableReason;
        }
        try {
            Native.register(bindings, library);
            return null;
        } catch (LinkageError | RuntimeException e) {
            return "this libibverbs predates it: " + firstLine(e);
        }
    }
}

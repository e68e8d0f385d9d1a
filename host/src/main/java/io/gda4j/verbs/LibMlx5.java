package io.gda4j.verbs;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

import io.gda4j.config.Setting;

/**
 * JNA direct mapping of libmlx5 ({@code libmlx5.so.1}, rdma-core's mlx5 provider with its direct-verbs API).
 *
 * <p>Only {@code mlx5dv_init_obj} is needed: it exposes a QP's send queue buffer, WQE count and stride, doorbell
 * record and BlueFlame/UAR register ({@link Mlx5dvQpDescriptor}), and a CQ's buffer, CQE count and size, doorbell
 * record and CQ number ({@link Mlx5dvCqDescriptor}). The default version {@code mlx5dv_init_obj@@MLX5_1.2} is
 * what {@code dlsym} returns. Loading never throws; see {@link #isAvailable()}.
 */
public final class LibMlx5 {
    public static final String LIBRARY_PROP_NAME = "gda4j.mlx5.library";
    public static final String LIBRARY_ENV = "GDA4J_MLX5_LIBRARY";
    public static final String LIBRARY_DEFAULT = "libmlx5.so.1";

    /** Which library JNA loads: a soname or a path (a test points it at one that does not exist). */
    public static final Setting<String> LIBRARY_SETTING = Setting.of("libmlx5 to load", LIBRARY_PROP_NAME, LIBRARY_ENV,
            LIBRARY_DEFAULT, "a library name or path for JNA, e.g. " + LIBRARY_DEFAULT, text -> text);

    private static final String LIBRARY_NAME = LIBRARY_SETTING.resolve();
    private static final String UNAVAILABLE_REASON;

    static {
        String reason = null;
        try {
            Native.register(LibMlx5.class, NativeLibrary.getInstance(LIBRARY_NAME));
        } catch (LinkageError | RuntimeException e) {
            reason = Verbs.firstLine(e);
        }
        UNAVAILABLE_REASON = reason;
    }

    private LibMlx5() {
    }

    /** The library name or path in use ({@link #LIBRARY_PROP_NAME}, else {@link #LIBRARY_ENV}, else the default). */
    public static String libraryName() {
        return LIBRARY_NAME;
    }

    public static boolean isAvailable() {
        return UNAVAILABLE_REASON == null;
    }

    /** Why the library could not be used, or null when it can. */
    public static String unavailableReason() {
        return UNAVAILABLE_REASON;
    }

    /**
     * {@code int mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type)}: 0, or an errno value. Asking for a
     * CQ marks it owned by direct verbs for consumer-index updates: from then on the owner polls and updates its
     * doorbell record itself.
     */
    public static native int mlx5dv_init_obj(long obj, long objType);
}

package io.gda4j.verbs;

import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

import io.gda4j.config.Setting;

/**
 * JNA direct mapping of libibverbs ({@code libibverbs.so.1}, rdma-core): pointers and {@code size_t} are Java
 * {@code long}s (LP64 only), {@code uint8_t} port numbers are {@code byte}s. About 90 ns a call: set-up only.
 *
 * <p>Loading never throws: when the library is missing {@link #isAvailable()} is false and
 * {@link #unavailableReason()} says why; calling a native method then throws {@link UnsatisfiedLinkError}.
 *
 * <p>What {@code libibverbs.so.1} exports versus what verbs.h declares (checked with {@code nm -D}, rdma-core 44):
 * <ul>
 * <li>{@code ibv_query_port}: verbs.h turns it into the inline {@code ___ibv_query_port}, which calls the context's
 *     {@code query_port} op with the full struct size. The exported symbol ({@code ibv_query_port@@IBVERBS_1.1},
 *     bound here) takes a {@code _compat_ibv_port_attr} and fills only the prefix before {@code port_cap_flags2};
 *     see {@link IbvPortAttrDescriptor}.</li>
 * <li>{@code ibv_reg_mr}: verbs.h makes it a macro that calls the exported {@code ibv_reg_mr@@IBVERBS_1.1} when no
 *     optional access flag is set, else {@code ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, access)}
 *     (IBVERBS_1.8). {@link #regMr} does the same.</li>
 * <li>{@code ibv_reg_dmabuf_mr}: exported since IBVERBS_1.12 (rdma-core 34); bound in {@link RegDmabufMr} so an
 *     older library still loads.</li>
 * <li>{@code ibv_alloc_null_mr}: not exported; a static inline calling the {@code alloc_null_mr} op of the
 *     {@code verbs_context}. {@link #allocNullMr} follows the same pointers, checked against the header by the
 *     layout test, and calls the op through a JNA {@link Function}.</li>
 * <li>{@code ibv_post_send}, {@code ibv_poll_cq}: inline, not exported; calls of the provider's
 *     {@code ops.post_send} / {@code ops.poll_cq} in the object's {@code ibv_context}. {@link SendQueue} calls them
 *     through those pointers (host posting); GPU kernels write WQEs and read CQEs themselves.</li>
 * </ul>
 */
public final class LibIbverbs {
    public static final String LIBRARY_PROP_NAME = "gda4j.ibverbs.library";
    public static final String LIBRARY_ENV = "GDA4J_IBVERBS_LIBRARY";
    public static final String LIBRARY_DEFAULT = "libibverbs.so.1";

    /** Which library JNA loads: a soname or a path (a test points it at one that does not exist). */
    public static final Setting<String> LIBRARY_SETTING = Setting.of("libibverbs to load", LIBRARY_PROP_NAME, LIBRARY_ENV,
            LIBRARY_DEFAULT, "a library name or path for JNA, e.g. " + LIBRARY_DEFAULT, text -> text);

    private static final String LIBRARY_NAME = LIBRARY_SETTING.resolve();
    private static final NativeLibrary LIBRARY;
    private static final String UNAVAILABLE_REASON;

    static {
        NativeLibrary library = null;
        String reason = null;
        try {
            library = NativeLibrary.getInstance(LIBRARY_NAME);
            Native.register(LibIbverbs.class, library);
        } catch (LinkageError | RuntimeException e) {
            reason = Verbs.firstLine(e);
        }
        LIBRARY = reason == null ? library : null;
        UNAVAILABLE_REASON = reason;
    }

    private LibIbverbs() {
    }

    /** The library name or path in use ({@link #LIBRARY_PROP_NAME}, else {@link #LIBRARY_ENV}, else the default). */
    public static String libraryName() {
        return LIBRARY_NAME;
    }

    /** Whether the library loaded and every symbol below was found. */
    public static boolean isAvailable() {
        return UNAVAILABLE_REASON == null;
    }

    /** Why the library could not be used, or null when it can. */
    public static String unavailableReason() {
        return UNAVAILABLE_REASON;
    }

    /** {@code struct ibv_device **ibv_get_device_list(int *num_devices)}; NULL with errno on failure. */
    public static native long ibv_get_device_list(int[] numDevices);

    public static native void ibv_free_device_list(long list);

    /** {@code const char *}, owned by the device. */
    public static native long ibv_get_device_name(long device);

    /** {@code __be64}: the node GUID in network byte order. */
    public static native long ibv_get_device_guid(long device);

    public static native long ibv_open_device(long device);

    public static native int ibv_close_device(long context);

    public static native int ibv_query_device(long context, long deviceAttr);

    /** The exported compat symbol: fills the {@code _compat_ibv_port_attr} prefix of {@code portAttr}. */
    public static native int ibv_query_port(long context, byte portNum, long portAttr);

    public static native int ibv_query_gid(long context, byte portNum, int index, long gid);

    public static native long ibv_alloc_pd(long context);

    public static native int ibv_dealloc_pd(long pd);

    /** The exported {@code ibv_reg_mr@@IBVERBS_1.1}; use {@link #regMr}, which routes optional flags right. */
    public static native long ibv_reg_mr(long pd, long addr, long length, int access);

    public static native int ibv_dereg_mr(long mr);

    public static native long ibv_create_cq(long context, int cqe, long cqContext, long channel, int compVector);

    public static native int ibv_destroy_cq(long cq);

    public static native long ibv_create_qp(long pd, long qpInitAttr);

    /** Returns 0, or an errno value (some providers return -1 and set errno). */
    public static native int ibv_modify_qp(long qp, long attr, int attrMask);

    public static native int ibv_destroy_qp(long qp);

    /**
     * What verbs.h's {@code ibv_reg_mr} macro does: the plain symbol unless an optional access flag
     * ({@link VerbsConstants#IBV_ACCESS_OPTIONAL_RANGE}) is set, then {@code ibv_reg_mr_iova2} with iova = addr.
     * Returns the {@code struct ibv_mr *}, or 0 with errno set.
     */
    public static long regMr(long pd, long addr, long length, int access) {
        if ((access & VerbsConstants.IBV_ACCESS_OPTIONAL_RANGE) == 0) {
            return ibv_reg_mr(pd, addr, length, access);
        }
        return RegMrIova2.ibv_reg_mr_iova2(pd, addr, length, addr, access);
    }

    /**
     * Why {@code ibv_alloc_null_mr} cannot be used on {@code context}, or null when it can: the same three tests as
     * verbs.h's {@code verbs_get_ctx_op(ctx, alloc_null_mr)}.
     */
    public static String nullMrUnsupportedReason(long context) {
        Pointer ctx = new Pointer(context);
        if (ctx.getLong(IbvContextDescriptor.ABI_COMPAT_OFFSET) != IbvContextDescriptor.ABI_IS_EXTENDED) {
            return "the provider's context is a legacy ibv_context without extended ops";
        }
        Pointer verbsContext = new Pointer(IbvContextDescriptor.verbsContext(context));
        long size = verbsContext.getLong(IbvContextDescriptor.VERBS_CONTEXT_SZ_OFFSET);
        if (size < IbvContextDescriptor.minimumSizeFor(IbvContextDescriptor.VERBS_CONTEXT_ALLOC_NULL_MR_OFFSET)) {
            return "the provider's verbs_context (" + size + " bytes) predates alloc_null_mr";
        }
        if (verbsContext.getLong(IbvContextDescriptor.VERBS_CONTEXT_ALLOC_NULL_MR_OFFSET) == 0) {
            return "the provider does not implement alloc_null_mr (mlx5 does)";
        }
        return null;
    }

    /**
     * verbs.h's static inline {@code ibv_alloc_null_mr(pd)}: calls {@code verbs_context->alloc_null_mr(pd)}. Check
     * {@link #nullMrUnsupportedReason} first (the inline returns NULL with errno EOPNOTSUPP in that case; this
     * method throws {@link IllegalStateException}). Returns the {@code struct ibv_mr *}, or 0 with errno set.
     */
    public static long allocNullMr(long pd) {
        long context = new Pointer(pd).getLong(IbvPdDescriptor.CONTEXT_OFFSET);
        String unsupported = nullMrUnsupportedReason(context);
        if (unsupported != null) {
            throw new IllegalStateException("ibv_alloc_null_mr is not available: " + unsupported);
        }
        long op = new Pointer(IbvContextDescriptor.verbsContext(context))
                .getLong(IbvContextDescriptor.VERBS_CONTEXT_ALLOC_NULL_MR_OFFSET);
        Pointer mr = (Pointer) Function.getFunction(new Pointer(op))
                .invoke(Pointer.class, new Object[] {new Pointer(pd)});
        return Pointer.nativeValue(mr);
    }

    /** {@code ibv_reg_mr_iova2} (IBVERBS_1.8), bound on its own so that its absence does not hide the rest. */
    public static final class RegMrIova2 {
        private static final String UNAVAILABLE_REASON = Verbs.registerOptional(RegMrIova2.class,
                LibIbverbs.LIBRARY, LibIbverbs.UNAVAILABLE_REASON);

        private RegMrIova2() {
        }

        public static boolean isAvailable() {
            return UNAVAILABLE_REASON == null;
        }

        public static String unavailableReason() {
            return UNAVAILABLE_REASON;
        }

        public static native long ibv_reg_mr_iova2(long pd, long addr, long length, long iova, int access);
    }

    /** {@code ibv_reg_dmabuf_mr} (IBVERBS_1.12, rdma-core 34+): registers GPU memory exported as a dma-buf. */
    public static final class RegDmabufMr {
        private static final String UNAVAILABLE_REASON = Verbs.registerOptional(RegDmabufMr.class,
                LibIbverbs.LIBRARY, LibIbverbs.UNAVAILABLE_REASON);

        private RegDmabufMr() {
        }

        public static boolean isAvailable() {
            return UNAVAILABLE_REASON == null;
        }

        public static String unavailableReason() {
            return UNAVAILABLE_REASON;
        }

        public static native long ibv_reg_dmabuf_mr(long pd, long offset, long length, long iova, int fd, int access);
    }
}

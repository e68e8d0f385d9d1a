package io.gda4j.verbs;

/**
 * {@code struct ibv_context} and the {@code struct verbs_context} that wraps it (verbs.h).
 *
 * <p>Modern providers allocate a {@code verbs_context} whose last member is the {@code ibv_context} handed out, and
 * mark it with {@code abi_compat == __VERBS_ABI_IS_EXTENDED}. New ops are added at the <em>front</em> of
 * verbs_context ("grows up"), so an op's distance below the ibv_context is stable across rdma-core versions, and
 * {@code sz} (just below the ibv_context) says how far down this provider's struct reaches. This is how the
 * header's inline functions ({@code ibv_alloc_null_mr}, {@code ibv_query_port}) find their op, and how gda4j does:
 * <pre>
 * verbs_context:   0 query_port()  8 advise_mr()  16 alloc_null_mr()  ...  312 sz (size_t)
 *                320 ibv_context { 0 device*  8 ops (96 poll_cq, 208 post_send)  ...  320 abi_compat* }   648 end
 * an op is usable  iff  abi_compat == ABI_IS_EXTENDED
 *                   and  sz &gt;= VERBS_CONTEXT_SIZE - (the op's offset)
 *                   and  the op is not NULL
 * </pre>
 */
public final class IbvContextDescriptor {
    public static final int SIZE = 328;
    public static final int DEVICE_OFFSET = 0;
    /**
     * {@code ops.poll_cq} and {@code ops.post_send}: what verbs.h's inline {@code ibv_poll_cq} and
     * {@code ibv_post_send} call ({@code cq->context->ops.poll_cq}, {@code qp->context->ops.post_send}).
     */
    public static final int OPS_POLL_CQ_OFFSET = 96;
    public static final int OPS_POST_SEND_OFFSET = 208;
    public static final int ABI_COMPAT_OFFSET = 320;
    /** {@code __VERBS_ABI_IS_EXTENDED}: {@code (void *)UINTPTR_MAX}. */
    public static final long ABI_IS_EXTENDED = -1L;

    public static final int VERBS_CONTEXT_SIZE = 648;
    public static final int VERBS_CONTEXT_QUERY_PORT_OFFSET = 0;
    public static final int VERBS_CONTEXT_ALLOC_NULL_MR_OFFSET = 16;
    public static final int VERBS_CONTEXT_SZ_OFFSET = 312;
    public static final int VERBS_CONTEXT_CONTEXT_OFFSET = 320;

    private IbvContextDescriptor() {
    }

    /** Address of the verbs_context around the ibv_context at {@code context}. */
    public static long verbsContext(long context) {
        return context - VERBS_CONTEXT_CONTEXT_OFFSET;
    }

    /** The smallest {@code sz} a provider's verbs_context has when it includes the op at {@code opOffset}. */
    public static long minimumSizeFor(int opOffset) {
        return VERBS_CONTEXT_SIZE - opOffset;
    }
}

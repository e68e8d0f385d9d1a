package io.gda4j.verbs;

/**
 * {@code struct ibv_pd} (verbs.h), allocated by the provider: {@code 0 context*, 8 handle (u32)}.
 * gda4j reads {@code context} to reach the context's ops, as the header's inline {@code ibv_alloc_null_mr} does.
 */
public final class IbvPdDescriptor {
    public static final int CONTEXT_OFFSET = 0;

    private IbvPdDescriptor() {
    }
}

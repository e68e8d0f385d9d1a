package io.gda4j.verbs;

/**
 * {@code struct ibv_cq} (verbs.h), allocated by the provider:
 * {@code 0 context*, 8 channel*, 16 cq_context*, 24 handle (u32), 28 cqe (int)}. {@code cqe} is the capacity
 * granted, at least what was asked for.
 */
public final class IbvCqDescriptor {
    public static final int CONTEXT_OFFSET = 0;
    public static final int CQE_OFFSET = 28;

    private IbvCqDescriptor() {
    }
}

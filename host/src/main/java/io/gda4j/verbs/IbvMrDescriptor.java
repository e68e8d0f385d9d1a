package io.gda4j.verbs;

/**
 * {@code struct ibv_mr} (verbs.h), allocated by the provider; gda4j only reads it. No size: providers embed it in
 * a larger private struct.
 * <pre>
 *   0 context*   8 pd*   16 addr*   24 length (size_t)   32 handle (u32)   36 lkey (u32)   40 rkey (u32)
 * </pre>
 */
public final class IbvMrDescriptor {
    public static final int CONTEXT_OFFSET = 0;
    public static final int PD_OFFSET = 8;
    public static final int ADDR_OFFSET = 16;
    public static final int LENGTH_OFFSET = 24;
    public static final int HANDLE_OFFSET = 32;
    public static final int LKEY_OFFSET = 36;
    public static final int RKEY_OFFSET = 40;

    private IbvMrDescriptor() {
    }
}

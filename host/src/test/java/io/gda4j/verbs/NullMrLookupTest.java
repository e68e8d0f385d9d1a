package io.gda4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Callback;
import com.sun.jna.CallbackReference;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link LibIbverbs#allocNullMr} follows the pointers of verbs.h's inline {@code ibv_alloc_null_mr}
 * (pd -> context -> verbs_context -> alloc_null_mr op). Here a fake verbs_context, laid out with the header-checked
 * offsets, carries a Java callback as the op, so the walk and the call are exercised without a device.
 */
class NullMrLookupTest {
    /** {@code struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd)}. */
    public interface AllocNullMrOp extends Callback {
        Pointer invoke(Pointer pd);
    }

    private static final long FAKE_MR = 0x5eed_0000L;

    private Memory verbsContext;
    private Memory pd;
    private long context;
    private long seenPd;
    private final AllocNullMrOp op = given -> {
        seenPd = Pointer.nativeValue(given);
        return new Pointer(FAKE_MR);
    };

    @BeforeEach
    void buildFakeContext() {
        verbsContext = new Memory(IbvContextDescriptor.VERBS_CONTEXT_SIZE);
        verbsContext.clear();
        context = Pointer.nativeValue(verbsContext) + IbvContextDescriptor.VERBS_CONTEXT_CONTEXT_OFFSET;
        verbsContext.setLong(IbvContextDescriptor.VERBS_CONTEXT_CONTEXT_OFFSET + IbvContextDescriptor.ABI_COMPAT_OFFSET,
                IbvContextDescriptor.ABI_IS_EXTENDED);
        verbsContext.setLong(IbvContextDescriptor.VERBS_CONTEXT_SZ_OFFSET, IbvContextDescriptor.VERBS_CONTEXT_SIZE);
        verbsContext.setPointer(IbvContextDescriptor.VERBS_CONTEXT_ALLOC_NULL_MR_OFFSET,
                CallbackReference.getFunctionPointer(op));
        pd = new Memory(16);
        pd.clear();
        pd.setLong(IbvPdDescriptor.CONTEXT_OFFSET, context);
    }

    @AfterEach
    void free() {
        verbsContext.close();
        pd.close();
    }

    @Test
    void callsTheOpWithThePd() {
        assertNull(LibIbverbs.nullMrUnsupportedReason(context));
        assertEquals(FAKE_MR, LibIbverbs.allocNullMr(Pointer.nativeValue(pd)));
        assertEquals(Pointer.nativeValue(pd), seenPd);
    }

    @Test
    void legacyContextIsRefused() {
        verbsContext.setLong(IbvContextDescriptor.VERBS_CONTEXT_CONTEXT_OFFSET + IbvContextDescriptor.ABI_COMPAT_OFFSET,
                0L);
        assertTrue(LibIbverbs.nullMrUnsupportedReason(context).contains("legacy"));
        assertThrows(IllegalStateException.class, () -> LibIbverbs.allocNullMr(Pointer.nativeValue(pd)));
    }

    @Test
    void providerStructTooShortIsRefused() {
        long justShort = IbvContextDescriptor.minimumSizeFor(IbvContextDescriptor.VERBS_CONTEXT_ALLOC_NULL_MR_OFFSET)
                - 1;
        verbsContext.setLong(IbvContextDescriptor.VERBS_CONTEXT_SZ_OFFSET, justShort);
        assertTrue(LibIbverbs.nullMrUnsupportedReason(context).contains("predates"));
        verbsContext.setLong(IbvContextDescriptor.VERBS_CONTEXT_SZ_OFFSET, justShort + 1);
        assertNull(LibIbverbs.nullMrUnsupportedReason(context));
    }

    @Test
    void missingOpIsRefused() {
        verbsContext.setLong(IbvContextDescriptor.VERBS_CONTEXT_ALLOC_NULL_MR_OFFSET, 0L);
        assertTrue(LibIbverbs.nullMrUnsupportedReason(context).contains("does not implement"));
    }
}

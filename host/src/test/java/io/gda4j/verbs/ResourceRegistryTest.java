package io.gda4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Closing order and idempotence of the owning classes, with stand-ins for the native objects. */
class ResourceRegistryTest {
    private final ResourceRegistry registry = new ResourceRegistry();
    private final List<String> destroyed = new ArrayList<>();

    private final class Fake extends VerbsResource {
        private final String name;
        private int failuresLeft;

        Fake(String name, VerbsResource... dependencies) {
            super(registry, name.hashCode(), List.of(dependencies));
            this.name = name;
        }

        @Override
        public String toString() {
            return name;
        }

        @Override
        void destroy(long nativeHandle) {
            if (failuresLeft > 0) {
                failuresLeft--;
                throw new VerbsException(name + " busy", Errno.EBUSY);
            }
            destroyed.add(name);
        }
    }

    @Test
    void closeAllGoesNewestFirst() {
        Fake pd = new Fake("pd");
        Fake cq = new Fake("cq");
        new Fake("mr", pd);
        new Fake("qp", pd, cq);
        assertNull(registry.closeAll());
        assertEquals(List.of("qp", "mr", "cq", "pd"), destroyed);
        assertEquals(0, registry.openCount());
        assertTrue(pd.isClosed());
    }

    @Test
    void closingAParentClosesItsDependentsFirst() {
        Fake pd = new Fake("pd");
        Fake cq = new Fake("cq");
        Fake mr = new Fake("mr", pd);
        Fake qp = new Fake("qp", pd, cq);
        Fake other = new Fake("other");
        cq.close();
        assertEquals(List.of("qp", "cq"), destroyed);
        assertTrue(qp.isClosed());
        assertFalse(mr.isClosed());
        pd.close();
        assertEquals(List.of("qp", "cq", "mr", "pd"), destroyed);
        assertFalse(other.isClosed());
        assertEquals(1, registry.openCount());
    }

    @Test
    void closeIsIdempotent() {
        Fake pd = new Fake("pd");
        pd.close();
        pd.close();
        assertNull(registry.closeAll());
        assertEquals(List.of("pd"), destroyed);
        assertThrows(IllegalStateException.class, pd::handle);
    }

    @Test
    void aFailedDestroyLeavesTheResourceOpenAndThrows() {
        Fake pd = new Fake("pd");
        Fake mr = new Fake("mr", pd);
        mr.failuresLeft = 1;
        VerbsException e = assertThrows(VerbsException.class, pd::close);
        assertEquals("mr busy", e.getMessage());
        assertFalse(mr.isClosed());
        assertFalse(pd.isClosed(), "the PD must outlive the MR that still uses it");
        pd.close();
        assertEquals(List.of("mr", "pd"), destroyed);
    }

    @Test
    void closeAllGoesOnAfterFailuresAndReportsThemAll() {
        Fake a = new Fake("a");
        Fake b = new Fake("b");
        Fake c = new Fake("c");
        a.failuresLeft = 1;
        c.failuresLeft = 1;
        VerbsException failure = registry.closeAll();
        assertEquals("c busy", failure.getMessage());
        assertEquals(1, failure.getSuppressed().length);
        assertEquals(List.of("b"), destroyed);
        assertTrue(a.isClosed() && b.isClosed() && c.isClosed(), "the device close releases the rest");
        assertSame(0, registry.openCount());
    }
}

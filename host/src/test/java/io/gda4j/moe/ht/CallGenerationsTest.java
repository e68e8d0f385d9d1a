package io.gda4j.moe.ht;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which handles and dispatch results a rank still trusts: a layout or dispatch retires the earlier ones when it
 * begins, so one that reached the GPU and then failed (issue 22: a layout refused for a bad expert index) leaves no
 * handle that a dispatch would take for current.
 */
class CallGenerationsTest {
    @Test
    void aLayoutThatBeganRetiresTheEarlierHandlesEvenWhenItFailsAfterwards() {
        CallGenerations g = new CallGenerations(0);
        long valid = g.beginLayout();
        g.requireLayout(valid);
        g.beginLayout();   // refused for a bad expert index after its kernel ran: no handle is returned
        IllegalStateException stale = assertThrows(IllegalStateException.class, () -> g.requireLayout(valid));
        assertTrue(stale.getMessage().contains("rank 0 ran a newer layout since"), stale.getMessage());
        assertTrue(stale.getMessage().contains("refused for a bad expert index counts too"), stale.getMessage());
        assertTrue(stale.getMessage().contains("run layout again on rank 0"), stale.getMessage());
        long next = g.beginLayout();
        assertDoesNotThrow(() -> g.requireLayout(next));
    }

    @Test
    void aDispatchRetiresTheEarlierResultsAndNamesTheRead() {
        CallGenerations g = new CallGenerations(1);
        long first = g.beginDispatch();
        g.requireDispatch(first, "recvX");
        long second = g.beginDispatch();
        IllegalStateException stale = assertThrows(IllegalStateException.class, () -> g.requireDispatch(first, "recvX"));
        assertEquals("recvX of dispatch #1: rank 1 dispatched again since (#2), and the outputs it shares with that call"
                + " may hold its rows; read and combine a dispatch's results before the next dispatch on its rank",
                stale.getMessage());
        assertDoesNotThrow(() -> g.requireDispatch(second, "combine"));
    }

    @Test
    void layoutsAndDispatchesCountApart() {
        CallGenerations g = new CallGenerations(0);
        long layout = g.beginLayout();
        long dispatch = g.beginDispatch();
        assertDoesNotThrow(() -> g.requireLayout(layout), "a dispatch keeps the handle of its layout current");
        g.beginLayout();
        // A layout leaves the received rows alone (a combine of them is refused through its handle's layout).
        assertDoesNotThrow(() -> g.requireDispatch(dispatch, "recvX"));
        assertThrows(IllegalStateException.class, () -> g.requireLayout(layout));
    }
}

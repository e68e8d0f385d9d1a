package io.gda4j.moe.ll;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every transition of the two-buffer state machine, legal and illegal. */
class AlternatingBuffersTest {
    private static void combine(AlternatingBuffers b, AlternatingBuffers.Ticket t) {
        b.combineSend(t);
        b.combineReceive(t);
    }

    @Test
    void callsAlternateAndTwoMayBeOutstanding() {
        AlternatingBuffers b = new AlternatingBuffers();
        AlternatingBuffers.Ticket t0 = b.dispatch();
        AlternatingBuffers.Ticket t1 = b.dispatch();
        assertEquals(0, t0.buffer());
        assertEquals(1, t1.buffer());
        assertEquals(AlternatingBuffers.State.DISPATCH_SENT, b.state(t0));
        b.receive(t0);
        assertEquals(AlternatingBuffers.State.DISPATCHED, b.state(t0));
        combine(b, t0);
        assertEquals(AlternatingBuffers.State.FREE, b.state(t0));
        AlternatingBuffers.Ticket t2 = b.dispatch();
        assertEquals(0, t2.buffer());
        assertEquals(2, t2.call());
    }

    @Test
    void aThirdDispatchBeforeTheFirstIsConsumedThrowsNamingIt() {
        AlternatingBuffers b = new AlternatingBuffers();
        AlternatingBuffers.Ticket t0 = b.dispatch();
        AlternatingBuffers.Ticket t1 = b.dispatch();
        b.receive(t0);
        b.receive(t1);
        IllegalStateException e = assertThrows(IllegalStateException.class, b::dispatch);
        assertTrue(e.getMessage().contains("held by dispatch #0"), e.getMessage());
        assertTrue(e.getMessage().contains("received, not yet combined or released"), e.getMessage());
        combine(b, t1);
        // still refused: call 2 takes buffer 0, which call 0 holds, even though buffer 1 is free
        assertThrows(IllegalStateException.class, b::dispatch);
        b.release(t0);
        assertEquals(0, b.dispatch().buffer());
        assertEquals(1, b.dispatch().buffer());
    }

    @Test
    void aRefusedDispatchChangesNothing() {
        AlternatingBuffers b = new AlternatingBuffers();
        AlternatingBuffers.Ticket t0 = b.dispatch();
        b.dispatch();
        assertThrows(IllegalStateException.class, b::dispatch);
        b.receive(t0);
        combine(b, t0);
        AlternatingBuffers.Ticket t2 = b.dispatch();
        assertEquals(2, t2.call(), "the refused call did not take a number");
    }

    @Test
    void outOfOrderStepsAreRefused() {
        AlternatingBuffers b = new AlternatingBuffers();
        AlternatingBuffers.Ticket t = b.dispatch();
        IllegalStateException early = assertThrows(IllegalStateException.class, () -> b.combineSend(t));
        assertTrue(early.getMessage().contains("receive() first"), early.getMessage());
        assertThrows(IllegalStateException.class, () -> b.release(t), "release before the rows arrived");
        assertThrows(IllegalStateException.class, () -> b.combineReceive(t));
        b.receive(t);
        assertThrows(IllegalStateException.class, () -> b.receive(t), "received twice");
        assertThrows(IllegalStateException.class, () -> b.combineReceive(t), "combine receive before its send");
        b.combineSend(t);
        assertThrows(IllegalStateException.class, () -> b.combineSend(t), "combined twice");
        assertThrows(IllegalStateException.class, () -> b.release(t), "released while its combine is in flight");
        b.combineReceive(t);
        IllegalStateException stale = assertThrows(IllegalStateException.class, () -> b.combineSend(t));
        assertTrue(stale.getMessage().contains("consumed already"), stale.getMessage());
        assertThrows(IllegalStateException.class, () -> b.release(t));
        assertThrows(IllegalStateException.class, () -> b.receive(t));
    }

    @Test
    void aStaleTicketCannotTouchTheNewerCallOnItsBuffer() {
        AlternatingBuffers b = new AlternatingBuffers();
        AlternatingBuffers.Ticket t0 = b.dispatch();
        b.receive(t0);
        b.release(t0);
        b.dispatch();
        AlternatingBuffers.Ticket t2 = b.dispatch();
        assertEquals(t0.buffer(), t2.buffer());
        assertThrows(IllegalStateException.class, () -> b.receive(t0), "t0's buffer now belongs to call 2");
        assertEquals(AlternatingBuffers.State.FREE, b.state(t0));
        assertEquals(AlternatingBuffers.State.DISPATCH_SENT, b.state(t2));
        b.receive(t2);
    }
}

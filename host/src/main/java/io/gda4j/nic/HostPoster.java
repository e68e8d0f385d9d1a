package io.gda4j.nic;

import io.gda4j.mlx5.CompletionErrorException;

import java.util.concurrent.TimeoutException;

/**
 * Posts work on a {@link NicQp} from a host thread: the proxy's NIC handler, host-side flushes and tests. Not
 * thread-safe: one thread posts. {@link NicQp#hostPoster()} gives the NIC's own: on a real mlx5 QP the work goes
 * through libibverbs ({@code ibv_post_send}, {@code ibv_poll_cq}), so rdma-core's barriers order it toward the NIC on
 * every CPU; on the emulated NIC, {@link RingPoster} writes the WQEs and rings its doorbell itself.
 *
 * <p>Each {@code post*} is one work request: signaled (each completes with a completion of its own), fenced while an
 * earlier READ or atomic of this poster has not completed (so it cannot read a buffer before that READ's data or
 * that atomic's fetched value has landed), waiting (polling completions) while the send queue is full, and published
 * by the next {@link #ring()}, which rings once for everything posted since the last. It returns the request's
 * counter: counters start at 0 and grow with every post (by the WQEBBs the request takes on {@link RingPoster}, by
 * one on libibverbs), {@link #producerIndex()} is the counter of the next, {@link #retiredIndex()} passes a request's
 * counter once its completion has been consumed, and the low bits of a counter modulo the send queue's WQEBBs
 * ({@code hostRings().sqWqebbs()}) are distinct among the requests in flight.
 *
 * <p>Errors: the first failed request throws {@link CompletionErrorException} from the {@link #poll()} that sees it,
 * naming the QP, the request's counter modulo 2^16, its mlx5 opcode and the mlx5 syndrome; the QP then flushes every
 * later request. {@link TimeoutException} says the NIC stopped completing work.
 */
public interface HostPoster {
    /** The QP posted on. */
    NicQp qp();

    /** The counter the next request will get. */
    long producerIndex();

    /** Every request whose counter is below this has completed (its completion was consumed). */
    long retiredIndex();

    /** RDMA WRITE of {@code byteCount} bytes from {@code laddr}/{@code lkey} to {@code raddr}/{@code rkey}. */
    long postWrite(long raddr, int rkey, long laddr, int lkey, int byteCount, long timeoutNanos)
            throws TimeoutException;

    /**
     * Inline RDMA WRITE of {@code payload} (copied now: the array may be reused). Throws
     * {@link IllegalArgumentException} for a payload above the QP's inline limit (the NIC would fail it).
     */
    long postWriteInline(long raddr, int rkey, byte[] payload, long timeoutNanos) throws TimeoutException;

    /** RDMA READ of {@code byteCount} bytes from {@code raddr}/{@code rkey} into {@code laddr}/{@code lkey}. */
    long postRead(long raddr, int rkey, long laddr, int lkey, int byteCount, long timeoutNanos)
            throws TimeoutException;

    /** 8-byte fetch-and-add of {@code add}; the old value goes to {@code laddr}/{@code lkey} (the null MR drops it). */
    long postFetchAdd(long raddr, int rkey, long add, long laddr, int lkey, long timeoutNanos) throws TimeoutException;

    /** 8-byte compare-and-swap; the old value goes to {@code laddr}/{@code lkey}. */
    long postCompareSwap(long raddr, int rkey, long compare, long swap, long laddr, int lkey, long timeoutNanos)
            throws TimeoutException;

    /**
     * The refusal both posters give an inline payload above the QP's limit, before anything is written (the NIC
     * would fail the WQE).
     *
     * @throws IllegalArgumentException when {@code length} exceeds {@code maxInlineBytes}
     */
    static void requireInline(NicQp qp, int length, int maxInlineBytes) {
        if (length > maxInlineBytes) {
            throw new IllegalArgumentException(String.format("%s: an inline payload of %d bytes exceeds the QP's"
                    + " max_inline of %d bytes; post a WRITE from registered memory, or create the QP with a larger"
                    + " QpSpec.maxInlineBytes", qp.label(), length, maxInlineBytes));
        }
    }

    /** Hands everything posted since the last ring to the NIC, with one doorbell. */
    void ring();

    /**
     * Consumes every completion that has arrived and returns how many; throws {@link CompletionErrorException} at
     * the first error (it stays consumed).
     */
    int poll();

    /** Rings, then polls until every request posted has completed, or throws after {@code timeoutNanos}. */
    void quiet(long timeoutNanos) throws TimeoutException;
}

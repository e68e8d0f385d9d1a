package io.gda4j.moe;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.moe.ht.HighThroughputRank;
import io.gda4j.moe.ll.AlternatingBuffers;
import io.gda4j.moe.ll.LowLatencyRank;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.world.Rank;

/**
 * One rank's MoE calls, both modes on one buffer as DeepEP's {@code Buffer} has them: high throughput
 * ({@link #layout}, {@link #dispatch}, {@link #combine}) where the config has that part, low latency
 * ({@link #lowLatencyDispatch}, {@link #lowLatencyCombine}) where it has that one; a call of a mode the config lacks
 * throws IllegalStateException saying how to add it. Inputs are checked on the host before anything is launched;
 * outputs live in the {@link MoeBuffer} (valid until the next call of the same kind on this rank). Every rank must
 * make the same sequence of calls of both modes.
 *
 * <p>The high-throughput calls run on {@link #callStream()}: the rank's stream ({@link #stream()}), or, with
 * {@link MoeConfig#communicationStream()}, a communication stream this rank owns. {@link #lastEvent()} is recorded
 * there after each dispatch and combine, for other streams to wait on. The low-latency calls run on {@link #stream()},
 * with no host synchronisation, in the order the caller queues them with its other work there. Host reads (layout's
 * check, the counts, {@link #copyToHost}) copy through pinned memory on the stream of the calls, so they wait for
 * this rank's calls only.
 *
 * <h2>Ordering with a communication stream</h2>
 * On the rank's stream (the default) the calls are ordered with the caller's work there like any kernel. With a
 * communication stream (DeepEP's {@code async_finish} on its {@code comm_stream}):
 * <ul>
 * <li>each call first makes the communication stream wait for the work queued on {@link #stream()} before the call
 *     (an event, no host wait): inputs the caller produced there are ready, and the outputs of earlier calls that the
 *     caller's work there reads are not overwritten before it has read them;</li>
 * <li>{@link #stream()} does not wait for the call: work queued there afterwards runs beside it. The outputs of a call
 *     (received rows and counts, combined rows) are valid on {@link #stream()} only for work queued after
 *     {@link #computeStreamWaitForLastCall()} (or another stream's {@link CudaStream#waitEvent} on
 *     {@link #lastEvent()}), and the call's inputs must not be written on {@link #stream()} before then: the call may
 *     still be reading them;</li>
 * <li>host reads wait for the calls queued before them on the communication stream, not for the caller's work on
 *     {@link #stream()};</li>
 * <li>a CUDA graph captured on {@link #stream()} takes in the communication stream at each call's wait (a fork);
 *     call {@link #computeStreamWaitForLastCall()} before ending the capture (the join: CUDA refuses to end a capture
 *     that left a stream unjoined). A replay is one piece of work on the stream it is launched on: synchronise that
 *     stream before reading its outputs on the host.</li>
 * </ul>
 * Kernels the caller runs beside the calls take SMs from the MoE kernels, whose blocks wait for each other: the calls
 * then take longer, which is the price of the overlap.
 *
 * <h2>Low latency: the send/receive split</h2>
 * Each low-latency call can be split into a send half (it returns once the sends are queued) and a receive half
 * ({@code receive()} on what it returned), so the caller can overlap its own work with the transfer. Dispatch number i
 * takes the low-latency buffer i % 2 and holds it until combined or released: a third dispatch while the first is held
 * throws before any kernel is queued. Expert indices live on the GPU and are checked there: the kernels treat an entry
 * outside [-1, numExperts) as -1, so all ranks complete the call, and {@link MoeLowLatencyDispatch#checkRouting()} and
 * {@link MoeBuffer#checkErrors()} (host synchronisations) throw naming it.
 */
public final class MoeRank {
    private final Rank rank;
    /** Null: the config has no high-throughput part. */
    private final HighThroughputRank ht;
    /** Null: the config has no low-latency part. */
    private final LowLatencyRank ll;

    MoeRank(Rank rank, HighThroughputRank ht, LowLatencyRank ll) {
        this.rank = rank;
        this.ht = ht;
        this.ll = ll;
    }

    /** Two blocks per channel, a sender and a receiver, each one per SM: what a high-throughput call takes. */
    public static int blocksPerRank(MoeConfig c) {
        return HighThroughputRank.blocksPerRank(
                MoeConfig.present(c.highThroughputPart(), MoeConfig.NO_HIGH_THROUGHPUT));
    }

    public Rank rank() {
        return rank;
    }

    /**
     * The rank's own stream, where the caller's work goes (the compute stream), and the low-latency calls. With a
     * communication stream, each high-throughput call waits for the work queued here before it, and this stream waits
     * for a call only after {@link #computeStreamWaitForLastCall()}.
     */
    public CudaStream stream() {
        return rank.stream();
    }

    /**
     * The stream the high-throughput calls' kernels and host reads run on: the communication stream this rank owns
     * when {@link MoeConfig#communicationStream()} is on, else {@link #stream()} (where the low-latency calls run).
     */
    public CudaStream callStream() {
        return ht != null ? ht.callStream() : rank.stream();
    }

    /**
     * Recorded on {@link #callStream()} after the last high-throughput dispatch or combine queued on this rank (after
     * the last low-latency call where the config has only that part), for other streams to wait on
     * ({@link CudaStream#waitEvent}). Recorded during a graph capture, it stands for captured work until the next
     * call outside the capture records it again. It records no time (an ordering event, cheaper to record): time the
     * calls with events of your own.
     */
    public CudaEvent lastEvent() {
        return ht != null ? ht.lastEvent() : ll.lastEvent();
    }

    /**
     * Makes the work queued on {@link #stream()} from now on wait for the last high-throughput dispatch or combine,
     * and so for every call before it (a {@code cuStreamWaitEvent} on {@link #lastEvent()}; the host does not wait):
     * after it, that work may read the calls' outputs and overwrite their inputs, and a graph capture begun on
     * {@link #stream()} may end. Without a communication stream the calls are on {@link #stream()} already, and this
     * does nothing.
     */
    public void computeStreamWaitForLastCall() {
        if (ht != null) {
            ht.computeStreamWaitForLastCall();
        }
    }

    /**
     * The layout of this rank's top-k ({@code numTokens x topK} INT64, -1 = no expert), on the GPU, after the work
     * queued on {@link #stream()} before it. Waits for it (the step's one host synchronisation) and throws on an
     * expert index outside [-1, numExperts) before any dispatch can use it. Once past the host's checks (type, shape,
     * token count) it retires this rank's earlier handles, even when it throws: the kernel has rewritten the routing
     * they described.
     *
     * <p>In a direct world (every pair p2p or self) a layout that passes its checks also queues the layout exchange
     * behind it, and does not wait for it: every rank tells every rank how many rows it will send it and how many of
     * them each local expert gets, so the dispatches with the handle start moving rows at once (DeepEP's cached
     * handle), and each rank's expert counts come from the exchange. Layout is then a call every rank makes, as
     * dispatch and combine are: a rank's exchange waits (up to the world's wait timeout) for every other rank's
     * layout. A layout refused on one rank must not be made on the others.
     */
    public MoeHandle layout(DeviceTensor topkIdx) {
        HighThroughputRank.Layout l = ht().layout(topkIdx);
        return new MoeHandle(ht, l.generation(), 0, l.numTokens(), l.tokensPerRank(), l.tokensPerExpert(),
                l.exchange());
    }

    /**
     * Dispatch of this rank's tokens ({@code x}: {@code numTokens x hidden} of the config's type; {@code scales}:
     * {@code numTokens x hidden/128} FP32 for FP8, null for BF16; {@code topkIdx} INT64 and {@code topkWeights} FP32,
     * {@code numTokens x topK}, the same top-k the handle's layout saw). Queued on {@link #callStream()}, after the
     * work queued on {@link #stream()} before it; see the class comment for when its outputs are valid there.
     */
    public MoeDispatchResult dispatch(DeviceTensor x, DeviceTensor scales, DeviceTensor topkIdx,
                                      DeviceTensor topkWeights, MoeHandle handle) {
        long generation = ht().dispatch(x, scales, topkIdx, topkWeights, handle.owner(), handle.layoutGeneration(),
                handle.numTokens(), handle.exchange());
        return new MoeDispatchResult(ht, handle.afterDispatch(generation), generation);
    }

    /**
     * Where to write the expert outputs for a combine that pulls them (a direct world only: every pair of ranks p2p or
     * self): {@code maxRecvTokens x hidden} BF16 in this rank's part of the heap, rows in the order dispatch returned
     * them. Passing this tensor (or a view of its first rows, at the same address) as {@link #combine}'s {@code y}
     * lets each rank read its tokens' rows from the peers' heaps and sum them as they arrive, with nothing copied
     * first: the fastest combine. Every rank of a combine must then pass its own; a rank that passes a tensor of its
     * own while another pulls fails the combine on every rank with an error that says so. The same memory holds the
     * rows peers push to this rank when y is a tensor of the caller's: write it after this rank's dispatch, not
     * before.
     *
     * @throws IllegalStateException in a world whose combines go through rings (an ibgda pair, or the proxy with
     *                               rowPath SM)
     */
    public DeviceTensor combineInput() {
        return ht().combineInput();
    }

    /**
     * Combine of {@code y} ({@code rows x hidden} BF16, the rows in the order dispatch returned them; rows is at least
     * the received count when that was read, else maxRecvTokens) back to the source ranks. Returns this rank's
     * {@code numTokens x hidden} BF16 sums, in a tensor the buffer owns. Queued on {@link #callStream()}, after the
     * work queued on {@link #stream()} before it; see the class comment for when its output is valid there. With
     * {@link #combineInput()} as y, the rows are pulled from the peers' heaps (every rank must then do so).
     */
    public DeviceTensor combine(DeviceTensor y, MoeDispatchResult dispatched) {
        MoeHandle h = dispatched.handle();
        return ht().combine(y, h.owner(), h.layoutGeneration(), h.dispatchGeneration(), h.numTokens(), h.exchange(),
                dispatched::knownRecvTokens);
    }

    /**
     * The low-latency dispatch of this rank's tokens: {@code x} is {@code numTokens x hidden} BF16 (cast to FP8 on the
     * fly when the config says so), {@code topkIdx} {@code numTokens x topK} INT64 (-1 = none). Each token goes once
     * to each distinct expert of its top-k into an expert-major buffer (io.gda4j.moe.check.MoeLowLatencyReference has
     * the layout). With {@code returnAfterSend} only the send half is queued: call
     * {@link MoeLowLatencyDispatch#receive()} before using the outputs. It runs on {@link #stream()}.
     *
     * @throws IllegalArgumentException for a wrong type or shape, or more tokens than the part's maxTokensPerRank
     * @throws IllegalStateException    when this dispatch's buffer is still held by the dispatch two calls back, or
     *                                  the config has no low-latency part
     */
    public MoeLowLatencyDispatch lowLatencyDispatch(DeviceTensor x, DeviceTensor topkIdx, boolean returnAfterSend) {
        AlternatingBuffers.Ticket t = ll().dispatch(x, topkIdx, returnAfterSend);
        return new MoeLowLatencyDispatch(ll, t, (int) x.dim(0));
    }

    /**
     * The low-latency combine of {@code y} ({@code [numLocalExperts][slots][hidden]} BF16, the layout
     * {@code dispatched} delivered) back to the sources: this rank gets {@code numTokens x hidden} BF16, token t the
     * sum over its top-k, in increasing k, of {@code topkWeights[t][k] * y_row} (FP32 fma, one rounding to BF16 at the
     * end): a weighted sum, where the high-throughput {@link #combine} is a plain one. {@code topkIdx} and
     * {@code topkWeights} ({@code numTokens x topK}, INT64 and FP32) must be the routing {@code dispatched} sent. With
     * {@code returnAfterSend} only the send half is queued: call {@link MoeLowLatencyCombine#receive()}. With
     * {@link MoeLowLatencyDispatch#combineInput()} as y where every pair of ranks is p2p or self, nothing is copied:
     * each rank reads its tokens' rows from the experts' ranks (every rank must then pass its combine input).
     *
     * @throws IllegalArgumentException when y overlaps a combine input of this rank without being the one of
     *                                  {@code dispatched}
     * @throws IllegalStateException    when the config has no low-latency part
     */
    public MoeLowLatencyCombine lowLatencyCombine(DeviceTensor y, DeviceTensor topkIdx, DeviceTensor topkWeights,
                                                 MoeLowLatencyDispatch dispatched, boolean returnAfterSend) {
        boolean pull = ll().combine(y, topkIdx, topkWeights, dispatched.rankCalls(), dispatched.ticket(),
                dispatched.numTokens(), returnAfterSend);
        MoeLowLatencyCombine c = new MoeLowLatencyCombine(ll, dispatched.ticket(), dispatched.numTokens(), topkIdx,
                topkWeights, pull);
        if (!returnAfterSend) {
            c.markReceived();
        }
        return c;
    }

    /**
     * Nanoseconds this rank's kernels spent waiting for {@code peer}'s counters, summed over warps and calls of both
     * modes.
     */
    public long waitNanos(int peer) {
        return (ht == null ? 0 : ht.waitNanos(peer)) + (ll == null ? 0 : ll.waitNanos(peer));
    }

    /**
     * Copies {@code dst.length} bytes of device memory at {@code address} to {@code dst} through pinned memory on
     * {@link #callStream()}: it waits for this rank's calls queued there, and for nothing else (with a communication
     * stream, not for the caller's work on {@link #stream()}).
     */
    public void copyToHost(DevicePointer address, byte[] dst) {
        if (ht != null) {
            ht.copyToHost(address, dst);
        } else {
            ll.copyToHost(address, dst);
        }
    }

    private HighThroughputRank ht() {
        return MoeConfig.present(ht, MoeConfig.NO_HIGH_THROUGHPUT);
    }

    private LowLatencyRank ll() {
        return MoeConfig.present(ll, MoeConfig.NO_LOW_LATENCY);
    }
}

/**
 * The high-throughput protocols of io.gda4j.moe (training and prefill: large batches), which
 * {@link io.gda4j.moe.MoeBuffer} and {@link io.gda4j.moe.MoeRank} call: the config's part
 * ({@link io.gda4j.moe.ht.HighThroughputPart}), its sizes and heap layout
 * ({@link io.gda4j.moe.ht.HighThroughputSizing}), the part of a buffer ({@link io.gda4j.moe.ht.HighThroughputBuffer})
 * and a rank's calls ({@link io.gda4j.moe.ht.HighThroughputRank}), and the parameter block the kernels read
 * ({@link io.gda4j.moe.ht.MoeParamsDescriptor}). Two protocols share the layout kernel ({@code kernels/moe_layout.cu})
 * and the parameter block: rings ({@code kernels/moe_ring.cu}, where some pair of ranks is proxy or ibgda) and direct
 * stores ({@code kernels/moe_direct.cu}, where every pair is p2p or self); the buffer loads the world's one.
 *
 * <h2>What moves where</h2>
 * A rank's tokens are split into {@code numChannels} contiguous ranges ({@link io.gda4j.moe.ht.MoeChannels}); channel
 * {@code c} is two thread blocks on every rank, one sending and one receiving. Dispatch sends each token once to
 * each rank that holds one of its experts (not once per expert), in token order, into the receiver's ring for
 * (channel, source); the receiver copies the rows out in (source rank, token) order, so its output is sorted by
 * source rank, then token. Combine sends each received row back along the same channel, and the source sums a
 * token's rows over the ranks in increasing rank order, in FP32, rounding once to BF16 (round to nearest even):
 * bitwise identical whatever the timing ({@link io.gda4j.moe.check.MoeReference} is that order, in Java).
 *
 * <h2>Direct worlds</h2>
 * Where every pair of ranks is p2p or self ({@link io.gda4j.moe.ht.HighThroughputSizing#direct()}, decided once by
 * every process together) there are no rings: the received tensors and the combine's landing rows live in the heap, and
 * each row is stored once, straight into its final place at the peer. A dispatch starts by SETting, at every rank, how
 * many rows it sends each rank (with the call's sequence number in the high word); once a block has every rank's counts
 * it knows where its rows go (after the rows of lower source ranks, then of its own earlier channels) and that every
 * rank has entered this call, so has finished with the tensors of its previous one. Its warps then claim quarter rows
 * one at a time from a counter (blocks do not move rows over NVLink at the same rate, so fixed shares left the call
 * waiting for the slowest block, and whole rows left it waiting for the last warps' rows). A combine starts the same
 * way with its sequence number and its form: with {@link io.gda4j.moe.MoeRank#combineInput()} as {@code y} every rank
 * pulls its tokens' rows from the peers' combine inputs and sums them as they arrive; with a tensor of the caller's
 * every rank pushes its rows into the sources' landing rows and each sums once all have landed. Ranks that mix the two
 * fail with a message instead of reading rows that were never written. After its rows each block fences and ADDs 1 to a
 * done word at every rank; a rank's call ends when its done words have counted every block of every rank (for a pull:
 * no peer still reads its combine input). The kernels number their own calls, so a graph replay is a new call. Results
 * are bitwise those of the ring protocol.
 *
 * <h2>Flow control (other worlds)</h2>
 * The receiver owns the rings and grants slots: a sender writes rows only into slots the receiver has freed
 * (cumulative credit counters), so at most {@code ringTokens} rows per (channel, peer) are in flight and a slow
 * receiver is never overrun. Over p2p the sender's warps store each row straight into the peer's ring; over proxy and
 * ibgda it packs rows into a local staging copy of the ring and sends each contiguous run with one put (one trigger
 * or WQE per chunk, never per token). The tail counter is signalled after the data; credits are signalled after the
 * rows were read. Every wait uses the world's runtime timeout; a timeout names the rank, the peer, the channel and
 * the counters ({@link io.gda4j.moe.MoeTimeoutException}).
 */
package io.gda4j.moe.ht;

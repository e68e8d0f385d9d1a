/**
 * The high-throughput protocols of io.gda4j.moe (training and prefill: large batches), which
 * {@link io.gda4j.moe.MoeBuffer} and {@link io.gda4j.moe.MoeRank} call: the config's part
 * ({@link io.gda4j.moe.ht.HighThroughputPart}), its sizes and heap layout
 * ({@link io.gda4j.moe.ht.HighThroughputSizing}), the part of a buffer ({@link io.gda4j.moe.ht.HighThroughputBuffer})
 * and a rank's calls ({@link io.gda4j.moe.ht.HighThroughputRank}), and the parameter block the kernels read
 * ({@link io.gda4j.moe.ht.MoeParamsDescriptor}). Two protocols share the layout kernel ({@code kernels/moe_layout.cu})
 * and the parameter block: rings ({@code kernels/moe_ring.cu}, where some pair of ranks is ibgda, or proxy with the
 * rows forced onto the SMs) and the direct protocol ({@code kernels/moe_direct.cu}: stores where every pair is p2p or
 * self, the copy engines' form there or over the proxy); the buffer loads the world's one
 * ({@link io.gda4j.moe.ht.PeerPaths}, {@link io.gda4j.moe.ht.MoeRowPath#resolve}).
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
 * Where every pair of ranks is p2p or self ({@link io.gda4j.moe.ht.HighThroughputSizing#direct()}, decided once by every process
 * together) there are no rings: the received tensors and the combine's landing rows live in the heap, and each row is
 * stored once, straight into its final place at the peer. {@link io.gda4j.moe.MoeRank#layout} queues the layout
 * exchange behind its kernel and does not wait for it: every rank SETs, at every rank, how many rows it will send each
 * rank (with the exchange's number in the high word, by its parity) and stores each rank's share of its per-expert
 * counts there, so each rank learns where its rows go at every rank (after the rows of lower source ranks, then of
 * its own earlier channels), what it receives from each, and its experts' counts, once per layout; a dispatch with the
 * handle starts moving rows at once. Layout is then a call of every rank, as dispatch and combine are. The received
 * tensors alternate between two heap regions by the dispatch's parity (the host's count of the rank's dispatches,
 * the same on every rank): a rank's previous dispatch ended only once every peer's rows of it had landed, so every
 * peer had started that dispatch and was done with the rows of the region it now writes; a dispatch that writes the
 * region its previous one wrote (a captured dispatch replayed) waits for every rank's entry first. A dispatch's warps
 * claim quarter rows one at a time from a counter (blocks do not move rows over NVLink at the same rate, so fixed
 * shares left the call waiting for the slowest block), the last wave of them in halves. A combine starts with its
 * sequence number and its form: with {@link io.gda4j.moe.MoeRank#combineInput()} as {@code y} every rank waits for
 * every rank's entry, pulls its tokens' rows from the peers' combine inputs and sums them as they arrive; with a
 * tensor of the caller's every rank pushes its rows into the sources' landing rows (waiting at its entry only in a
 * second combine of one dispatch) and each sums once all have landed. Ranks that mix the two fail with a message
 * instead of reading rows that were never written. Each block counts itself done in device memory; the rank's last
 * block fences and SETs the call's sequence at every rank, and a call ends when every rank's word has it (for a pull:
 * no peer still reads its combine input). The kernels number their own calls, so a graph replay is a new call.
 * Results are bitwise those of the ring protocol.
 *
 * <p>{@link io.gda4j.moe.ht.MoeRowPath} chooses what moves a direct world's rows: the SMs (stores, above) or the copy
 * engines, where a kernel on the buffer's blocks packs each destination's rows contiguously, the host queues one copy
 * per received array and peer behind it on the call's stream and an 8-byte copy of the call's sequence into the peer's
 * done word after them (copies on one stream run in order), and a one-block kernel waits for every peer's; the
 * combine copies each source's rows back in one copy into its copy-engine landing rows and sums on the buffer's
 * blocks. The copies' sizes come from the layout exchange, which the host reads from mapped memory once the exchange
 * kernel has stamped it.
 *
 * <h2>Over the proxy: host-queued transfers</h2>
 * A world whose other pairs are proxy ({@link io.gda4j.moe.ht.PeerPaths#HOST_TRANSFERS}) runs the same copy-engine
 * form by default: the staging arrays and the direct state live in the heap, and the transfers to a proxy peer go
 * through its link ({@link io.gda4j.transport.HostTransfers}), queued by the calling thread: copies on the call's
 * stream, or, for the verbs handler, one host function per call that hands each peer's WRITEs and signal to the proxy
 * thread as one chained post. No trigger sits on a call's path; the layout exchange puts each rank's expert shares to
 * such peers from the outgoing half of its table. Since the stream does not wait for a NIC's WRITEs, a copy-engine
 * dispatch that follows a dispatch with no combine between waits for every rank's entry before it rewrites the
 * staging (the entry proves the peer received the last one).
 *
 * <h2>Flow control (worlds with rings)</h2>
 * The receiver owns the rings and grants slots: a sender writes rows only into slots the receiver has freed
 * (cumulative credit counters), so at most {@code ringTokens} rows per (channel, peer) are in flight and a slow
 * receiver is never overrun. Over p2p the sender's warps store each row straight into the peer's ring; over proxy and
 * ibgda it packs rows into a local staging copy of the ring and sends each contiguous run with one put (one trigger
 * or WQE per chunk, never per token). The tail counter is signalled after the data; credits are signalled after the
 * rows were read. Every wait uses the world's runtime timeout; a timeout names the rank, the peer, the channel and
 * the counters ({@link io.gda4j.moe.MoeTimeoutException}).
 */
package io.gda4j.moe.ht;

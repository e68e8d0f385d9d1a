/**
 * Expert-parallel MoE all-to-all for training and prefill (large batches), in DeepEP's shape:
 * {@link io.gda4j.moe.MoeBuffer} (sized once from a {@link io.gda4j.moe.MoeConfig}, in the symmetric heap),
 * and per rank {@link io.gda4j.moe.MoeRank#layout}, {@link io.gda4j.moe.MoeRank#dispatch} and
 * {@link io.gda4j.moe.MoeRank#combine}.
 *
 * <h2>What moves where</h2>
 * A rank's tokens are split into {@code numChannels} contiguous ranges ({@link io.gda4j.moe.MoeChannels}); channel
 * {@code c} is two thread blocks on every rank, one sending and one receiving. Dispatch sends each token once to
 * each rank that holds one of its experts (not once per expert), in token order, into the receiver's ring for
 * (channel, source); the receiver copies the rows out in (source rank, token) order, so its output is sorted by
 * source rank, then token. Combine sends each received row back along the same channel, and the source sums a
 * token's rows over the ranks in increasing rank order, in FP32, rounding once to BF16 (round to nearest even):
 * bitwise identical whatever the timing ({@link io.gda4j.moe.MoeReference} is that order, in Java).
 *
 * <h2>Direct worlds</h2>
 * Where every pair of ranks is p2p or self ({@link io.gda4j.moe.MoeSizing#direct()}, decided once by every process
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
 * <p>{@link io.gda4j.moe.MoeRowPath} chooses what moves a direct world's rows: the SMs (stores, above) or the copy
 * engines, where a kernel on the buffer's blocks packs each destination's rows contiguously, the host queues one copy
 * per received array and peer behind it on the call's stream and an 8-byte copy of the call's sequence into the peer's
 * done word after them (copies on one stream run in order), and a one-block kernel waits for every peer's; the
 * combine copies each source's rows back in one copy into its copy-engine landing rows and sums on the buffer's
 * blocks. The copies' sizes come from the layout exchange, which the host reads from mapped memory once the exchange
 * kernel has stamped it.
 *
 * <h2>Flow control (other worlds)</h2>
 * The receiver owns the rings and grants slots: a sender writes rows only into slots the receiver has freed
 * (cumulative credit counters), so at most {@code ringTokens} rows per (channel, peer) are in flight and a slow
 * receiver is never overrun. Over p2p the sender's warps store each row straight into the peer's ring; over proxy and
 * ibgda it packs rows into a local staging copy of the ring and sends each contiguous run with one put (one trigger
 * or WQE per chunk, never per token). The tail counter is signalled after the data; credits are signalled after the
 * rows were read. Every wait uses the world's runtime timeout; a timeout names the rank, the peer, the channel and
 * the counters ({@link io.gda4j.moe.MoeTimeoutException}).
 *
 * <h2>Input checks</h2>
 * Shapes, element types and buffer sizes are checked on the host before anything is launched. Expert indices are
 * checked by the layout kernel on the GPU: {@code layout} waits for it and throws on an index outside
 * {@code [-1, numExperts)} before any dispatch kernel can run (a dispatch takes the handle a layout returned). That
 * wait is the one host synchronisation of a step; dispatch and combine are queued on the rank's stream without one,
 * and reading the received counts ({@link io.gda4j.moe.MoeDispatchResult#numRecvTokens()}) is an explicit
 * synchronisation. With {@link io.gda4j.moe.MoeConfig#communicationStream()} the calls run on a communication
 * stream per rank instead, ordered with the rank's stream by events ({@link io.gda4j.moe.MoeRank} says how).
 *
 * <h2>Low latency (decoding)</h2>
 * {@link io.gda4j.moe.MoeLowLatencyBuffer} (sized from a {@link io.gda4j.moe.MoeLowLatencyConfig}) sends each token
 * once to each distinct expert of its top-k into an expert-major buffer, BF16 or FP8 cast on the fly
 * ({@link io.gda4j.moe.Fp8BlockQuantizer}), with no host synchronisation and two alternating buffers; the layout and
 * the combine order are {@link io.gda4j.moe.MoeLowLatencyReference}'s. Each call can be split into a send and a
 * receive half; unsplit, each is one kernel (where one wave of blocks holds a block per token, the dispatch's blocks
 * route their own tokens; beyond, a route kernel goes first). The combine reads the expert outputs where
 * they are when they were written to {@link io.gda4j.moe.MoeLowLatencyDispatch#combineInput()} and every pair of ranks
 * is direct; otherwise the experts' ranks return the rows first. Over the proxy, where each put costs the proxy
 * thread a driver call, a pair of ranks is batched: one put of all the rows one rank sends another, one of the count
 * table with the pair's signal, and one put of the combine's rows back. A {@link io.gda4j.moe.MoeBuffer} whose
 * config has a low-latency part ({@link io.gda4j.moe.MoeConfig.Builder#lowLatency}) makes both modes' calls on one
 * buffer ({@link io.gda4j.moe.MoeRank#lowLatencyDispatch}), as DeepEP's one {@code Buffer} does.
 *
 * <h2>References</h2>
 * {@link io.gda4j.moe.MoeReference} and {@link io.gda4j.moe.MoeLowLatencyReference} compute every output in Java, in
 * the kernels' order; {@link io.gda4j.moe.MoeRouting} and {@link io.gda4j.moe.MoeLowLatencyRouting} generate the cases
 * they are fed; {@link io.gda4j.moe.MoeReferenceCheck} and {@link io.gda4j.moe.MoeLowLatencyReferenceCheck} run a
 * buffer's calls on the GPU and compare them with the references bit for bit. They are public for the tests and for
 * {@code gda4j moe --check}; timing the calls and NCCL's all-to-all-v beside them is the samples' business
 * (io.gda4j.samples.moe), not the library's.
 */
package io.gda4j.moe;

/**
 * A baseline to compare with, not a transport: NCCL's grouped send/receive (all-to-all-v) between ranks, all in one
 * process or one per process, through a JNA binding of {@code libnccl.so.2} ({@link io.gda4j.samples.nccl.LibNccl}:
 * found through {@code GDA4J_NCCL_LIBRARY} or a Python environment's {@code nvidia/nccl/lib}, and reported absent,
 * never thrown, when it is not there). {@link io.gda4j.samples.nccl.NcclComms} makes one communicator per rank with
 * {@code ncclCommInitAll} in one process, or this process's with {@code ncclCommInitRank}, the unique id carried by
 * the caller's all-gather (one GPU per rank either way: NCCL refuses a device twice);
 * {@link io.gda4j.samples.nccl.AllToAllV} is the byte counts and offsets of one exchange and queues it on the ranks'
 * streams. {@code io.gda4j.samples.moe} builds the exchange of a MoE routing (the NCCL columns of {@code gda4j moe}).
 * It lives in the samples, beside the benchmarks that use it: the library (gda4j-host) compares nothing with NCCL.
 *
 * <p>Internal: gda4j-samples is an application and exports nothing.
 */
package io.gda4j.samples.nccl;

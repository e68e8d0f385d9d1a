/**
 * A baseline to compare with, not a transport: NCCL's grouped send/receive (all-to-all-v) between ranks, all in one
 * process or one per process, through a JNA binding of {@code libnccl.so.2} ({@link io.gda4j.nccl.LibNccl}: found
 * through {@code GDA4J_NCCL_LIBRARY} or a Python environment's {@code nvidia/nccl/lib}, and reported absent, never
 * thrown, when it is not there). {@link io.gda4j.nccl.NcclComms} makes one communicator per rank with
 * {@code ncclCommInitAll} in one process, or this process's with {@code ncclCommInitRank}, the unique id carried by
 * the caller's all-gather (one GPU per rank either way: NCCL refuses a device twice); {@link io.gda4j.nccl.AllToAllV}
 * is the byte counts and offsets of one exchange and queues it on the ranks' streams. io.gda4j.moe builds the
 * exchange of a MoE routing (MoeNcclBaseline). It lives in the host module beside the MoE code it is compared with,
 * and needs nothing but JNA, which the host module already uses for libibverbs.
 */
package io.gda4j.nccl;

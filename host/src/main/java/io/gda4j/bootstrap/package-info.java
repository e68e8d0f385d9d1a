/**
 * Worlds of many processes, the CPU half: reading which rank this process is from the launcher's environment
 * ({@link io.gda4j.bootstrap.LaunchEnvironment}: torchrun, Open MPI, Slurm or explicit {@code GDA4J_*} variables) and
 * a TCP bootstrap at the root's address ({@link io.gda4j.bootstrap.Bootstrap}): a job token both sides prove
 * without sending it, session keys from that handshake and a MAC on every frame after it, an all-gather of small
 * byte arrays, a barrier, heartbeats and dead-peer detection. The GPU half, heaps shared by CUDA IPC and p2p across
 * the processes of one host, is {@link io.gda4j.world.ProcessWorld}.
 *
 * <p>{@code Bootstrap} is the public facade and holds the frame switch; behind it, one package-private class per
 * role: {@code RootGate} (the root's door: the connections not yet proven, on one selector), {@code MemberJoin} (a
 * member joining), {@code PeerLink} (one connection and its writer thread), {@code FrameReader} (a connection's
 * frames read field by field, their MACs checked), {@code Collectives} (allGather and barrier bookkeeping at the
 * root and at a member) and {@code Liveness} (heartbeats, dead-after, a peer's failure spread to the others).
 */
package io.gda4j.bootstrap;

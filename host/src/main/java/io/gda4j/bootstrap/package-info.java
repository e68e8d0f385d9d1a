/**
 * Worlds of many processes, the CPU half: reading which rank this process is from the launcher's environment
 * ({@link io.gda4j.bootstrap.LaunchEnvironment}: torchrun, Open MPI, Slurm or explicit {@code GDA4J_*} variables) and
 * a TCP bootstrap at the root's address ({@link io.gda4j.bootstrap.Bootstrap}): a job token both sides prove
 * without sending it, an all-gather of small byte arrays, a barrier, heartbeats and dead-peer detection. The GPU half, heaps shared by CUDA IPC and p2p across
 * the processes of one host, is {@link io.gda4j.world.ProcessWorld}.
 */
package io.gda4j.bootstrap;

/**
 * Worlds of ranks: {@link io.gda4j.world.World}, {@link io.gda4j.world.LocalWorld} (every rank in this JVM) and
 * {@link io.gda4j.world.ProcessWorld} (one rank per process, started by a launcher), chosen by
 * {@link io.gda4j.world.Worlds#create()}; each rank's GPU context, symmetric heap and device view
 * ({@link io.gda4j.world.Rank}), device errors, and {@link io.gda4j.world.DeviceOps} for single device calls from the
 * host.
 *
 * <h2>Ranks that share a GPU</h2>
 * Listing a GPU twice ({@code --gpus 0,0}) puts two ranks on it: the way to test on a one-GPU machine. Those ranks
 * share the GPU's context, and the rule of {@link io.gda4j.cuda} applies to them: <b>no call that can wait for
 * running work in a context (loading a module or a kernel, allocating or freeing memory, synchronizing the context)
 * while a kernel of any rank in that context may be running</b>; otherwise rank 0's thread waits for rank 1's kernel,
 * which waits for rank 0. What the world does about it:
 * <ul>
 *   <li>modules are loaded once per GPU and shared by the ranks on it (a second rank's first launch finds them
 *       loaded), with every kernel resolved while loading;</li>
 *   <li>{@link io.gda4j.world.World#loadModules(String...)} loads modules on every GPU up front: call it (or resolve
 *       the kernels) before launching kernels that wait for each other; {@link io.gda4j.world.DeviceOps} and the
 *       samples do so;</li>
 *   <li>a load or allocation that would have to wait anyway is refused with
 *       {@link io.gda4j.cuda.ContextBusyException}, naming the stream whose kernel still runs;</li>
 *   <li>{@code close()} raises the abort flags and waits for running kernels before freeing anything;</li>
 *   <li>the proxy threads and the emulated NIC's engine make no such call while the world runs: they allocate and
 *       load while it is created, and then only queue copies, stream writes and launches.</li>
 * </ul>
 * Figures measured with ranks on one GPU are functional checks, not GPU-to-GPU numbers; the samples label them so.
 */
package io.gda4j.world;

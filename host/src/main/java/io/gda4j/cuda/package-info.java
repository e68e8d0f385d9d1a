/**
 * The CUDA layer of gda4j: a thin, owning wrapper over the CUDA driver API (through JCuda).
 *
 * <p>Start at {@link io.gda4j.cuda.Cuda#status()}, which never throws and says why CUDA is unusable on a machine
 * without a driver or GPU. Every CUresult goes through {@link io.gda4j.cuda.Cuda#check(int, String)} and becomes a
 * {@link io.gda4j.cuda.CudaException} that names the operation. Resources ({@link io.gda4j.cuda.CudaContext},
 * {@link io.gda4j.cuda.DeviceMemory}, {@link io.gda4j.cuda.MappedHostMemory}, {@link io.gda4j.cuda.CudaStream},
 * {@link io.gda4j.cuda.CudaEvent}, {@link io.gda4j.cuda.PtxModule}) are {@link java.lang.AutoCloseable} owners that
 * close idempotently; closing a context closes what was created from it that is still open, newest first.
 *
 * <h2>The rule for shared contexts: nothing that waits for running work while a kernel may run</h2>
 * Every owner of a GPU's primary context, and so every rank placed on that GPU, works in one CUDA context. Some
 * driver calls wait for work already running in the context before they do anything: loading a module or a kernel
 * ({@code cuModuleLoadData}, and {@code cuModuleGetFunction} under lazy loading), unloading one, allocating or
 * freeing memory ({@code cuMemAlloc}, {@code cuMemHostAlloc}, {@code cuMemFree}), registering host memory,
 * synchronizing the context. If the running kernel is spinning until another rank on the same GPU does something,
 * and that rank's thread is the one making such a call, neither ever finishes. So: <b>no call that can wait for
 * running work in a context while a kernel of any rank in that context may be running.</b>
 * <ul>
 *   <li>{@link io.gda4j.cuda.PtxModule} resolves every kernel of a PTX module while it loads, so a launch never loads
 *       code;</li>
 *   <li>{@link io.gda4j.cuda.Kernel#launch} records the stream, and the calls above that gda4j makes on demand
 *       (module and kernel loads, allocations) first ask {@link io.gda4j.cuda.CudaDevice#requireNoRunningKernels}:
 *       while a recorded kernel on that GPU has not finished after a grace of a second (a kernel that ends on its
 *       own is waited out, one that spins until this thread acts is not) they throw
 *       {@link io.gda4j.cuda.ContextBusyException} instead of hanging;</li>
 *   <li>frees, unloads and {@link io.gda4j.cuda.CudaContext#synchronize()} are not refused (a close must be able
 *       to run): call them when the kernels are done. A world's {@code close()} first stops its kernels;</li>
 *   <li>what may run beside spinning kernels: launches, asynchronous copies and stream memory operations, stream
 *       and event queries and synchronization of one stream, and loads and stores of mapped memory.</li>
 * </ul>
 */
package io.gda4j.cuda;

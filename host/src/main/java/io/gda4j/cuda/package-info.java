/**
 * The CUDA layer of gda4j: a thin, owning wrapper over the CUDA driver API (through JCuda).
 *
 * <p>Start at {@link io.gda4j.cuda.Cuda#status()}, which never throws and says why CUDA is unusable on a machine
 * without a driver or GPU. Every CUresult goes through {@link io.gda4j.cuda.Cuda#check(int, String)} and becomes a
 * {@link io.gda4j.cuda.CudaException} that names the operation. Resources ({@link io.gda4j.cuda.CudaContext},
 * {@link io.gda4j.cuda.DeviceMemory}, {@link io.gda4j.cuda.MappedHostMemory}, {@link io.gda4j.cuda.CudaStream},
 * {@link io.gda4j.cuda.CudaEvent}, {@link io.gda4j.cuda.PtxModule}) are {@link java.lang.AutoCloseable} owners that
 * close idempotently; closing a context closes what was created from it that is still open, newest first.
 */
package io.gda4j.cuda;

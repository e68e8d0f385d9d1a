package io.gda4j.cuda;

import java.util.Arrays;
import java.util.Objects;

import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * One kernel of a {@link PtxModule}, launched on a {@link CudaStream} with {@link KernelArgs}. Obtain it with
 * {@link PtxModule#function(String)}; it lives as long as its module.
 *
 * <p>Launches are checked against the parameter list in the PTX: a wrong argument count or size would otherwise
 * make the kernel read garbage, so it is an {@link IllegalArgumentException} here instead.
 */
public final class Kernel {
    private final PtxModule module;
    private final String name;
    private final CUfunction handle;
    /** Parameter sizes from the PTX (-1: unknown type); null when the PTX declaration was not found. */
    private final int[] parameterSizes;

    Kernel(PtxModule module, String name, CUfunction handle, int[] parameterSizes) {
        this.module = module;
        this.name = name;
        this.handle = handle;
        this.parameterSizes = parameterSizes;
    }

    /** The kernel's name in the PTX. */
    public String name() {
        return name;
    }

    /** The module the kernel belongs to. */
    public PtxModule module() {
        return module;
    }

    /** The JCuda handle, for driver calls this class does not wrap. */
    public CUfunction handle() {
        return handle;
    }

    /** Queues a 1-D launch: {@code gridX} blocks of {@code blockX} threads. */
    public void launch(int gridX, int blockX, int sharedBytes, CudaStream stream, KernelArgs args) {
        launch(gridX, 1, 1, blockX, 1, 1, sharedBytes, stream, args);
    }

    /**
     * Queues a launch on {@code stream} ({@code cuLaunchKernel}); returns without waiting for the kernel.
     *
     * @param sharedBytes dynamic shared memory per block, in bytes
     * @throws IllegalArgumentException when a dimension is not positive, {@code sharedBytes} is negative, the
     *                                  stream belongs to another GPU, or the arguments do not match the PTX
     * @throws CudaException            naming the kernel, the dimensions and the arguments when the launch fails
     */
    public void launch(int gridX, int gridY, int gridZ, int blockX, int blockY, int blockZ, int sharedBytes,
            CudaStream stream, KernelArgs args) {
        if (gridX <= 0 || gridY <= 0 || gridZ <= 0 || blockX <= 0 || blockY <= 0 || blockZ <= 0 || sharedBytes < 0) {
            throw new IllegalArgumentException("kernel " + name + ": " + dims(gridX, gridY, gridZ, blockX, blockY,
                    blockZ, sharedBytes) + " is invalid: every dimension must be at least 1 and shared memory not"
                    + " negative");
        }
        Objects.requireNonNull(stream, "stream; create one with CudaContext.createStream()");
        Objects.requireNonNull(args, "args; use KernelArgs.create() for a kernel without parameters");
        module.ensureOpen();
        stream.ensureOpen();
        if (stream.context().device() != module.context().device()) {
            throw new IllegalArgumentException("kernel " + name + " is loaded on " + module.context().device()
                    + " but the stream belongs to " + stream.context().device()
                    + ": launch it on a stream of the same GPU");
        }
        checkArguments(name, parameterSizes, args);
        // The stream's context: the same primary context as the module's, and still open even when the module is
        // shared by the ranks of one GPU and was loaded through another rank's owner.
        stream.context().makeCurrent();
        Pointer parameters = args.count() == 0 ? null : args.toPointer();
        int result = JCudaDriver.cuLaunchKernel(handle, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedBytes,
                stream.handle(), parameters, null);
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuLaunchKernel(" + name + " from module " + module.name() + ", "
                    + dims(gridX, gridY, gridZ, blockX, blockY, blockZ, sharedBytes) + ", args " + args + ", " + stream
                    + ")");
        }
        stream.context().device().launches().launched(stream);
    }

    /** The most threads a block of this kernel can have (limited by its register and shared memory use). */
    public int maxThreadsPerBlock() {
        module.ensureOpen();
        module.context().makeCurrent();
        int[] value = {0};
        Cuda.check(JCudaDriver.cuFuncGetAttribute(value, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                handle), "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK, kernel " + name + ")");
        return value[0];
    }

    /**
     * How many blocks of {@code blockSize} threads using {@code sharedBytes} of dynamic shared memory fit on one
     * SM at once; times {@link CudaDevice#multiprocessorCount()} it bounds a persistent kernel's grid.
     */
    public int maxActiveBlocksPerMultiprocessor(int blockSize, int sharedBytes) {
        if (blockSize <= 0 || sharedBytes < 0) {
            throw new IllegalArgumentException("kernel " + name + ": block size must be at least 1 and shared memory"
                    + " not negative, got " + blockSize + " threads and " + sharedBytes + " bytes");
        }
        module.ensureOpen();
        module.context().makeCurrent();
        int[] blocks = {0};
        Cuda.check(JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, handle, blockSize, sharedBytes),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor(kernel " + name + ", " + blockSize + " threads, "
                        + sharedBytes + " shared bytes)");
        return blocks[0];
    }

    @Override
    public String toString() {
        return "Kernel[" + name + " in " + module + "]";
    }

    /** Checks {@code args} against the PTX parameter sizes; null sizes (declaration not found) accept anything. */
    static void checkArguments(String kernelName, int[] parameterSizes, KernelArgs args) {
        if (parameterSizes == null) {
            return;
        }
        boolean matches = parameterSizes.length == args.count();
        for (int i = 0; matches && i < parameterSizes.length; i++) {
            matches = parameterSizes[i] < 0 || parameterSizes[i] == args.sizeBytes(i);
        }
        if (!matches) {
            throw new IllegalArgumentException("kernel " + kernelName + " takes " + parameterSizes.length
                    + " parameters of " + Arrays.toString(parameterSizes) + " bytes (per its PTX) but was given "
                    + args.count() + " arguments " + args + ": match the kernel's C signature in order and size");
        }
    }

    private static String dims(int gridX, int gridY, int gridZ, int blockX, int blockY, int blockZ, int sharedBytes) {
        return "grid (" + gridX + "," + gridY + "," + gridZ + ") block (" + blockX + "," + blockY + "," + blockZ
                + ") shared " + sharedBytes + " bytes";
    }
}

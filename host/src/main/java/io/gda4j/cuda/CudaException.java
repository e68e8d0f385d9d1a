package io.gda4j.cuda;

import java.util.Map;

import jcuda.driver.CUresult;

/**
 * A CUDA driver call returned an error. Carries the raw {@linkplain #result() CUresult}, its
 * {@linkplain #errorName() name} and the {@linkplain #operation() operation} that failed, for example
 * {@code cuMemAlloc(268435456 bytes on GPU 0) failed: CUDA_ERROR_OUT_OF_MEMORY (2)}, followed by a hint when one
 * is known. Created only by {@link Cuda#check(int, String)} and by code that needs a specific hint.
 */
public class CudaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Hints a person can act on, per CUresult; the one place they live. */
    private static final Map<Integer, String> HINTS = Map.ofEntries(
            Map.entry(CUresult.CUDA_ERROR_OUT_OF_MEMORY,
                    "the GPU has not enough free memory: free buffers, allocate less, or check nvidia-smi for other processes"),
            Map.entry(CUresult.CUDA_ERROR_NO_DEVICE,
                    "no CUDA GPU is visible to this process: check nvidia-smi and CUDA_VISIBLE_DEVICES"),
            Map.entry(CUresult.CUDA_ERROR_STUB_LIBRARY,
                    "the libcuda.so.1 found is the CUDA toolkit's stub, not the driver: remove the stubs directory from LD_LIBRARY_PATH"),
            Map.entry(CUresult.CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
                    "the NVIDIA kernel module and user-space driver versions differ: reboot or reinstall the driver"),
            Map.entry(CUresult.CUDA_ERROR_INVALID_PTX,
                    "the driver rejected the PTX; it may be too old for it (needs R580+ for PTX from CUDA 13.0)"),
            Map.entry(CUresult.CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
                    "the NVIDIA driver is too old for this PTX (needs a driver that supports PTX ISA of CUDA 13.0, i.e. R580+)"),
            Map.entry(CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU,
                    "the PTX targets a newer GPU architecture than this one; rebuild device-ptx for this GPU"),
            Map.entry(CUresult.CUDA_ERROR_JIT_COMPILER_NOT_FOUND,
                    "the driver's PTX JIT compiler (libnvidia-ptxjitcompiler) is missing: reinstall the NVIDIA driver"),
            Map.entry(CUresult.CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
                    "these two GPUs cannot access each other's memory (no NVLink or PCIe P2P path): use the proxy transport"),
            Map.entry(CUresult.CUDA_ERROR_TOO_MANY_PEERS,
                    "a GPU can have peer access to at most 8 others: enable fewer peers"),
            Map.entry(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,
                    "a kernel accessed memory it does not own; the context is now unusable: restart the process"
                            + " (run under compute-sanitizer to find the access)"),
            Map.entry(CUresult.CUDA_ERROR_MISALIGNED_ADDRESS,
                    "a kernel made a misaligned access; the context is now unusable: restart the process"),
            Map.entry(CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION,
                    "a kernel executed an illegal instruction; the context is now unusable: restart the process"),
            Map.entry(CUresult.CUDA_ERROR_LAUNCH_FAILED,
                    "a kernel failed; the context is now unusable: restart the process"),
            Map.entry(CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                    "the kernel needs more registers or shared memory than this block size allows: use a smaller block"),
            Map.entry(CUresult.CUDA_ERROR_LAUNCH_TIMEOUT,
                    "a kernel ran longer than the display watchdog allows: use a GPU without a display attached"),
            Map.entry(CUresult.CUDA_ERROR_DEINITIALIZED,
                    "the CUDA driver is shutting down (JVM exit?): do no CUDA work from shutdown hooks"),
            Map.entry(CUresult.CUDA_ERROR_NOT_PERMITTED,
                    "the driver refused the operation: it may need root or an NVIDIA driver option such as PeerMappingOverride=1"));

    private final int result;
    private final String errorName;
    private final String operation;

    /**
     * An exception for a failed driver call, with the standard hint for {@code result} if there is one.
     *
     * @param result    the CUresult the driver returned (not CUDA_SUCCESS)
     * @param operation what was attempted, with its arguments, e.g. {@code "cuMemAlloc(4096 bytes on GPU 0)"}
     */
    public CudaException(int result, String operation) {
        this(result, operation, hintFor(result));
    }

    /**
     * An exception for a failed driver call with a caller-chosen hint.
     *
     * @param hint what the user can do about it; empty for none
     */
    public CudaException(int result, String operation, String hint) {
        super(message(result, operation, hint));
        this.result = result;
        this.errorName = errorName(result);
        this.operation = operation;
    }

    /** The raw CUresult code, e.g. 2 for CUDA_ERROR_OUT_OF_MEMORY. */
    public int result() {
        return result;
    }

    /** The CUresult's name, e.g. {@code "CUDA_ERROR_OUT_OF_MEMORY"}. */
    public String errorName() {
        return errorName;
    }

    /** The operation that failed, e.g. {@code "cuMemAlloc(268435456 bytes on GPU 0)"}. */
    public String operation() {
        return operation;
    }

    /** The name of a CUresult, or {@code UNRECOGNIZED_CURESULT} for a code this JCuda does not know. */
    public static String errorName(int result) {
        String name = CUresult.stringFor(result);
        // JCuda answers "INVALID CUresult: n" for codes newer than itself; keep the name one token.
        return name == null || name.startsWith("INVALID") ? "UNRECOGNIZED_CURESULT" : name;
    }

    /** {@code "CUDA_ERROR_OUT_OF_MEMORY (2)"}: the name and the number, as every message shows them. */
    public static String describe(int result) {
        return errorName(result) + " (" + result + ")";
    }

    /** The standard hint for a CUresult, or an empty string. */
    public static String hintFor(int result) {
        return HINTS.getOrDefault(result, "");
    }

    private static String message(int result, String operation, String hint) {
        String base = operation + " failed: " + describe(result);
        return hint == null || hint.isEmpty() ? base : base + "; " + hint;
    }
}

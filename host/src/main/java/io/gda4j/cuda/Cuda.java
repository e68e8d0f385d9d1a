package io.gda4j.cuda;

import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Entry point of the CUDA layer: probes the driver once, turns CUresult codes into exceptions, and hands out
 * {@link CudaDevice}s.
 *
 * <p>{@link #status()} never throws: on a machine without the NVIDIA driver it reports why, so callers can skip
 * GPU work with a message instead of crashing on an {@link UnsatisfiedLinkError}.
 */
public final class Cuda {
    private static final Object DEVICES_LOCK = new Object();
    private static CudaDevice[] devices;

    private Cuda() {
    }

    /** Probed on first use by the class-holder idiom: once per JVM, thread-safe, no lock afterwards. */
    private static final class StatusHolder {
        static final CudaStatus STATUS = probe();
    }

    /**
     * Whether CUDA is usable here, and why not. Probes once (loading the JCuda driver binding, {@code cuInit(0)},
     * the driver version and the device count) and caches the answer; never throws.
     */
    public static CudaStatus status() {
        return StatusHolder.STATUS;
    }

    /**
     * Throws {@link CudaUnavailableException} with {@link CudaStatus#reason()} when CUDA is not usable.
     *
     * @throws CudaUnavailableException when there is no driver, no GPU, or the binding failed to load
     */
    public static void requireAvailable() {
        CudaStatus status = status();
        if (!status.available()) {
            throw new CudaUnavailableException(status.reason());
        }
    }

    /**
     * The one place where a CUresult becomes an exception: returns when {@code result} is CUDA_SUCCESS.
     *
     * @param result               what the driver call returned
     * @param operationDescription the call and its arguments, e.g. {@code "cuMemAlloc(4096 bytes on GPU 0)"}
     * @throws CudaException naming the operation and the error when {@code result} is not CUDA_SUCCESS
     */
    public static void check(int result, String operationDescription) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new CudaException(result, operationDescription);
        }
    }

    /**
     * The answer of a query call ({@code cuEventQuery}, {@code cuStreamQuery}): true for CUDA_SUCCESS (the work is
     * done), false for CUDA_ERROR_NOT_READY (still queued or running); any other result throws, as {@link #check}
     * does.
     */
    public static boolean isDone(int queryResult, String operationDescription) {
        if (queryResult == CUresult.CUDA_ERROR_NOT_READY) {
            return false;
        }
        check(queryResult, operationDescription);
        return true;
    }

    /**
     * The hardware work queues each context gets ({@code CUDA_DEVICE_MAX_CONNECTIONS}: the user's value, else 32 set
     * by gda4j before the driver started; see {@link DriverEnvironment}). Streams beyond it share queues.
     */
    public static int deviceMaxConnections() {
        return DriverEnvironment.applyBeforeDriverStarts().queues();
    }

    /**
     * The hardware work queues the driver makes of a {@code CUDA_DEVICE_MAX_CONNECTIONS} value: 1 to 32; its default,
     * 8, for null, blank or anything it cannot read.
     */
    public static int maxConnectionsFor(String value) {
        return DriverEnvironment.parse(value);
    }

    /** Where {@link #deviceMaxConnections()} came from, e.g. "CUDA_DEVICE_MAX_CONNECTIONS=32 (set by gda4j: ...)". */
    public static String deviceMaxConnectionsSource() {
        return DriverEnvironment.applyBeforeDriverStarts().source();
    }

    /** The number of visible GPUs; 0 when CUDA is unavailable (never throws). */
    public static int deviceCount() {
        return status().deviceCount();
    }

    /**
     * The GPU with this ordinal (as CUDA numbers them after CUDA_VISIBLE_DEVICES). The same instance is returned
     * for the same ordinal.
     *
     * @throws CudaUnavailableException when CUDA is not usable here
     * @throws IllegalArgumentException when no GPU has this ordinal
     */
    public static CudaDevice device(int ordinal) {
        requireAvailable();
        int count = deviceCount();
        if (ordinal < 0 || ordinal >= count) {
            throw new IllegalArgumentException("GPU " + ordinal + " does not exist: this machine has " + count
                    + (count == 1 ? " CUDA device (ordinal 0)" : " CUDA devices (ordinals 0.." + (count - 1) + ")")
                    + "; check CUDA_VISIBLE_DEVICES");
        }
        synchronized (DEVICES_LOCK) {
            if (devices == null) {
                devices = new CudaDevice[count];
            }
            if (devices[ordinal] == null) {
                devices[ordinal] = new CudaDevice(ordinal);
            }
            return devices[ordinal];
        }
    }

    /** The version of the JCuda bindings this build calls the driver through (its jar's, else the one built with). */
    public static String bindingVersion() {
        Package p = JCudaDriver.class.getPackage();
        String v = p == null ? null : p.getImplementationVersion();
        return v == null ? "12.6.0" : v;
    }

    /** The driver's CUDA version as "major.minor", e.g. "13.0"; "unknown" when no driver could be loaded. */
    public static String driverVersionString() {
        return formatDriverVersion(status().driverVersion());
    }

    /** Formats a {@code cuDriverGetVersion} number: 13000 -> "13.0", 12060 -> "12.6"; 0 or less -> "unknown". */
    static String formatDriverVersion(int version) {
        if (version <= 0) {
            return "unknown";
        }
        return (version / 1000) + "." + (version % 1000) / 10;
    }

    private static CudaStatus probe() {
        int driverVersion = 0;
        // Before the first driver call: the driver reads it when it starts (see DriverEnvironment).
        DriverEnvironment.applyBeforeDriverStarts();
        try {
            int[] out = {0};
            // The first touch of JCudaDriver loads libJCudaDriver, which links against libcuda.so.1.
            if (JCudaDriver.cuDriverGetVersion(out) == CUresult.CUDA_SUCCESS) {
                driverVersion = out[0];
            }
            int result = JCudaDriver.cuInit(0);
            if (result != CUresult.CUDA_SUCCESS) {
                String hint = CudaException.hintFor(result);
                return unavailable("cuInit failed: " + CudaException.describe(result)
                        + (hint.isEmpty() ? "" : "; " + hint), driverVersion);
            }
            result = JCudaDriver.cuDeviceGetCount(out);
            if (result != CUresult.CUDA_SUCCESS) {
                return unavailable("cuDeviceGetCount failed: " + CudaException.describe(result), driverVersion);
            }
            int count = out[0];
            if (count <= 0) {
                return unavailable("the NVIDIA driver reports no CUDA device: check nvidia-smi and CUDA_VISIBLE_DEVICES",
                        driverVersion);
            }
            return new CudaStatus(true, "CUDA driver " + formatDriverVersion(driverVersion) + " with " + count
                    + (count == 1 ? " GPU" : " GPUs"), driverVersion, count);
        } catch (UnsatisfiedLinkError e) {
            return unavailable(linkFailureReason(e), driverVersion);
        } catch (NoClassDefFoundError e) {
            // Either jcuda is missing from the class path or JCudaDriver's static initialiser failed earlier.
            return unavailable("the JCuda driver binding could not be initialised (" + firstLine(e.getMessage())
                    + "): is org.jcuda:jcuda with its natives on the class path, and is the NVIDIA driver installed?",
                    driverVersion);
        } catch (Throwable t) {
            return unavailable("the JCuda driver binding failed to load: " + t, driverVersion);
        }
    }

    private static CudaStatus unavailable(String reason, int driverVersion) {
        return new CudaStatus(false, reason, driverVersion, 0);
    }

    /** JCuda's message nests one stack trace per load attempt; pick out the line that says what is missing. */
    static String linkFailureReason(UnsatisfiedLinkError e) {
        return linkFailureReason(e, JCudaDriver.class.getModule().isNamed());
    }

    /** As {@link #linkFailureReason(UnsatisfiedLinkError)}, where JCuda is a named module or not. */
    static String linkFailureReason(UnsatisfiedLinkError e, boolean jcudaOnModulePath) {
        String message = String.valueOf(e.getMessage());
        if (message.contains("libcuda.so")) {
            return "libcuda.so.1 (the NVIDIA driver) was not found: no CUDA driver on this machine";
        }
        String natives = "jcuda-natives-" + bindingVersion() + "-linux-x86_64.jar";
        if (message.contains("No resource found with name '/lib/")) {
            // JCuda reads its library from its own jar's resources; on the module path it sees its own module only.
            return "JCuda's native library was not found: " + (jcudaOnModulePath
                    ? "on the module path JCuda looks for it in its own module, so patch JCuda's natives into it:"
                            + " --patch-module jcuda=" + natives
                    : natives + " (org.jcuda:jcuda-natives, classifier linux-x86_64) is not on the class path");
        }
        String detail = firstLine(message);
        for (String line : message.split("\n")) {
            if (line.contains("undefined symbol") || line.contains("cannot open shared object")
                    || line.contains("wrong ELF class")) {
                detail = line.trim();
                break;
            }
        }
        return "the JCuda native library (libJCudaDriver) could not be loaded: " + detail;
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "no message";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }
}

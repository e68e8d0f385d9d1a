package io.gda4j.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.gda4j.ptx.ShippedPtx;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * A loaded CUDA module: PTX (the toolkit's, shipped as {@code io/gda4j/ptx/<name>.ptx} in gda4j-device-ptx, or your
 * own) JIT-compiled by the driver for this GPU, or a cubin. Hands out its kernels by name; unloaded on
 * {@link #close()} (idempotent), after which its kernels cannot be launched.
 *
 * <p>Every kernel a PTX module declares is resolved ({@code cuModuleGetFunction}) while the module loads. Under the
 * driver's lazy loading (the default since CUDA 12.2) resolving a kernel is what loads its code, and loading can wait
 * for kernels already running in the context; resolving them all up front means a later launch loads nothing, so it
 * cannot wait behind another rank's spinning kernel on the same GPU.
 */
public final class PtxModule extends ContextResource {
    /** Where PTX resources live on the class path. */
    public static final String RESOURCE_DIRECTORY = "io/gda4j/ptx/";

    /** The hint for PTX the driver cannot take: the toolkit's PTX is built by CUDA 13.0. */
    static final String DRIVER_TOO_OLD_HINT = "the NVIDIA driver may be too old for this PTX (needs a driver that"
            + " supports PTX ISA of CUDA 13.0, i.e. R580+)";

    private static final Set<Integer> PTX_REJECTED = Set.of(CUresult.CUDA_ERROR_INVALID_PTX,
            CUresult.CUDA_ERROR_UNSUPPORTED_PTX_VERSION, CUresult.CUDA_ERROR_INVALID_IMAGE,
            CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU, CUresult.CUDA_ERROR_JIT_COMPILER_NOT_FOUND);

    private static final Pattern ENTRY = Pattern.compile("\\.entry\\s+([A-Za-z_$%][\\w$%]*)\\s*(?:\\(([^)]*)\\))?");
    private static final Pattern SCALAR_TYPE = Pattern.compile("\\.[bsuf](8|16|32|64)\\b");
    private static final Pattern ARRAY_LENGTH = Pattern.compile("\\[(\\d+)\\]\\s*$");
    private static final Pattern VERSION = Pattern.compile("^\\s*\\.version\\s+(\\S+)", Pattern.MULTILINE);
    private static final Pattern TARGET = Pattern.compile("^\\s*\\.target\\s+([^\\s,]+)", Pattern.MULTILINE);

    private final String name;
    private final CUmodule handle;
    /** Kernel name -> parameter sizes in bytes (-1 where the PTX type was not understood), in file order. */
    private final Map<String, int[]> signatures;
    private final Map<String, Kernel> kernels = new ConcurrentHashMap<>();

    private PtxModule(CudaContext context, String name, CUmodule handle, Map<String, int[]> signatures) {
        super(context);
        this.name = name;
        this.handle = handle;
        this.signatures = signatures;
    }

    /** Loads {@code ptx} (without trailing NUL) into {@code context}, which the caller has made current. */
    static PtxModule load(CudaContext context, String name, byte[] ptx) {
        return load(context, ModuleImage.bytes(name, ptx));
    }

    /**
     * Loads {@code image} into {@code context}, which the caller has made current, and resolves every kernel its
     * PTX declares.
     */
    static PtxModule load(CudaContext context, ModuleImage image) {
        byte[] raw = image.rawBytes();
        boolean ptx = image.kind() == ModuleImage.Kind.PTX;
        // cuModuleLoadData reads PTX as a C string: a byte[] needs the NUL a Java array does not have.
        byte[] data = ptx ? Arrays.copyOf(raw, raw.length + 1) : raw;
        CUmodule module = new CUmodule();
        int result = JCudaDriver.cuModuleLoadData(module, data);
        if (result != CUresult.CUDA_SUCCESS) {
            String hint = PTX_REJECTED.contains(result)
                    ? (ptx ? DRIVER_TOO_OLD_HINT : "the cubin was built for another GPU architecture: build it for this"
                            + " GPU (nvcc -cubin -arch sm_" + context.device().computeCapabilityMajor()
                            + context.device().computeCapabilityMinor() + ") or ship PTX")
                            + "; this driver supports CUDA " + Cuda.driverVersionString()
                    : CudaException.hintFor(result);
            throw new CudaException(result, "cuModuleLoadData(" + image.origin() + ", "
                    + (ptx ? describe(raw) : "cubin of " + raw.length + " bytes") + ", on " + context.device() + ")",
                    hint);
        }
        PtxModule loaded = new PtxModule(context, image.name(), module, ptx ? parseSignatures(raw) : Map.of());
        try {
            for (String kernelName : loaded.signatures.keySet()) {
                loaded.kernels.put(kernelName, loaded.lookUp(kernelName));
            }
        } catch (RuntimeException e) {
            try {
                loaded.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return loaded;
    }

    /**
     * Reads the PTX text of module {@code name} from the class path (no GPU needed), without a trailing NUL.
     *
     * @param name the module name, e.g. {@code "p2p_bench"} (a trailing ".ptx" is accepted)
     * @throws IllegalArgumentException when no such resource is on the class path
     */
    public static byte[] readPtx(String name) {
        String normalized = normalizeName(name);
        // Through device-ptx's own class: on the module path its package's resources are visible to it alone.
        Optional<byte[]> shipped = ShippedPtx.read(normalized);
        if (shipped.isPresent()) {
            return shipped.get();
        }
        String path = resourcePath(normalized);
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        InputStream in = loader == null ? null : loader.getResourceAsStream(path);
        if (in == null) {
            throw new IllegalArgumentException("PTX resource " + path
                    + " not on the class path; is gda4j-device-ptx a dependency?");
        }
        try (InputStream stream = in) {
            return stream.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("could not read PTX resource " + path, e);
        }
    }

    /**
     * Whether gda4j-device-ptx ships module {@code name} ({@code io/gda4j/ptx/<name>.ptx}): asked here rather than
     * of a class loader, which on the module path does not see that module's resources.
     */
    public static boolean isShipped(String name) {
        return ShippedPtx.has(normalizeName(name));
    }

    /** The class-path resource of module {@code name}: {@code io/gda4j/ptx/<name>.ptx}. */
    public static String resourcePath(String name) {
        return RESOURCE_DIRECTORY + normalizeName(name) + ".ptx";
    }

    /** The module's name, e.g. {@code "p2p_bench"}. */
    public String name() {
        return name;
    }

    /** The JCuda handle, for driver calls this class does not wrap. */
    public CUmodule handle() {
        return handle;
    }

    /** The kernels ({@code .entry} functions) the PTX declares, in file order; empty for a cubin. */
    public List<String> kernelNames() {
        return List.copyOf(signatures.keySet());
    }

    /**
     * The kernel named {@code kernelName} (its unmangled {@code extern "C"} name); the same instance each time. A
     * PTX module's kernels were resolved when it loaded; a cubin's are resolved here on first use, which is a load:
     * it is refused while a kernel on this GPU may still run (see {@link ContextBusyException}).
     *
     * @throws CudaException naming the module and listing its kernels when there is no such kernel
     */
    public Kernel function(String kernelName) {
        ensureOpen();
        Kernel known = kernels.get(kernelName);
        if (known != null) {
            return known;
        }
        return kernels.computeIfAbsent(kernelName, k -> {
            context.device().requireNoRunningKernels("loading kernel " + k + " of module " + name
                    + " (cuModuleGetFunction)");
            return lookUp(k);
        });
    }

    /** Unloads the module ({@code cuModuleUnload}); its kernels must not be running. */
    @Override
    int free() {
        return JCudaDriver.cuModuleUnload(handle);
    }

    @Override
    String freeCall() {
        return "cuModuleUnload(" + this + ")";
    }

    @Override
    String describe() {
        return name + " on " + context.device();
    }

    void ensureOpen() {
        if (isClosed()) {
            throw new IllegalStateException(this + " is closed: load it again with CudaContext.loadModule(\"" + name
                    + "\")");
        }
    }

    private Kernel lookUp(String kernelName) {
        context.makeCurrent();
        CUfunction function = new CUfunction();
        int result = JCudaDriver.cuModuleGetFunction(function, handle, kernelName);
        String operation = "cuModuleGetFunction(\"" + kernelName + "\" in PTX module " + name + ")";
        if (result == CUresult.CUDA_ERROR_NOT_FOUND) {
            throw new CudaException(result, operation, "module " + name + " has no kernel of that name"
                    + (signatures.isEmpty() ? "" : "; its kernels are " + signatures.keySet())
                    + " (declare kernels extern \"C\" so their names are not mangled)");
        }
        Cuda.check(result, operation);
        return new Kernel(this, kernelName, function, signatures.get(kernelName));
    }

    static String normalizeName(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("PTX module name must not be empty; use e.g. \"p2p_bench\" for "
                    + RESOURCE_DIRECTORY + "p2p_bench.ptx");
        }
        return name.endsWith(".ptx") ? name.substring(0, name.length() - ".ptx".length()) : name;
    }

    /** ".version 9.0, .target sm_90": what the PTX asks of the driver, for load-failure messages. */
    static String describe(byte[] ptx) {
        String text = new String(ptx, StandardCharsets.US_ASCII);
        Matcher version = VERSION.matcher(text);
        Matcher target = TARGET.matcher(text);
        return ".version " + (version.find() ? version.group(1) : "?") + ", .target "
                + (target.find() ? target.group(1) : "?");
    }

    /**
     * Kernel name -> parameter sizes in bytes, from the {@code .entry} declarations: {@code .param .u64 x} is 8
     * bytes, {@code .param .align 8 .b8 s[24]} is 24; -1 where the declaration was not understood.
     */
    static Map<String, int[]> parseSignatures(byte[] ptx) {
        String text = new String(ptx, StandardCharsets.US_ASCII);
        Map<String, int[]> signatures = new LinkedHashMap<>();
        Matcher entry = ENTRY.matcher(text);
        while (entry.find()) {
            String params = entry.group(2);
            List<Integer> sizes = new ArrayList<>();
            if (params != null && !params.isBlank()) {
                for (String param : params.split(",")) {
                    sizes.add(paramSizeBytes(param.trim()));
                }
            }
            signatures.put(entry.group(1), sizes.stream().mapToInt(Integer::intValue).toArray());
        }
        return Collections.unmodifiableMap(signatures);
    }

    private static int paramSizeBytes(String declaration) {
        Matcher type = SCALAR_TYPE.matcher(declaration);
        if (!type.find()) {
            return -1;
        }
        int elementBytes = Integer.parseInt(type.group(1)) / 8;
        Matcher array = ARRAY_LENGTH.matcher(declaration);
        return array.find() ? elementBytes * Integer.parseInt(array.group(1)) : elementBytes;
    }
}

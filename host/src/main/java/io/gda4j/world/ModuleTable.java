package io.gda4j.world;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.ModuleImage;
import io.gda4j.cuda.PtxModule;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The CUDA modules of a world: one copy per GPU, shared by every rank on that GPU, each loaded with all its kernels
 * resolved. Ranks that share a GPU share its context, and loading a module waits for kernels running in the context;
 * so a module is loaded once per GPU, by whichever rank needs it first, and never again while the world lives (a
 * second rank's first launch finds it loaded instead of waiting behind the first rank's spinning kernel).
 *
 * <p>A load is refused with {@link io.gda4j.cuda.ContextBusyException} while a kernel on that GPU may run: load what
 * kernels that wait for each other need before launching them ({@link World#loadModules(String...)}). Thread-safe.
 */
final class ModuleTable implements AutoCloseable {
    /** GPU ordinal -> module name -> the module loaded on that GPU. */
    private final Map<Integer, Map<String, PtxModule>> loaded = new HashMap<>();
    /** Module name -> the image loaded under that name, so one name cannot stand for two different images. */
    private final Map<String, ModuleImage> images = new HashMap<>();
    private boolean closed;

    /** The kernel {@code function} of {@code image} on {@code context}'s GPU, loading the module there if needed. */
    synchronized Kernel kernel(CudaContext context, ModuleImage image, String function) {
        return module(context, image).function(function);
    }

    /** The module {@code image} on {@code context}'s GPU, loaded (through {@code context}) on first use. */
    synchronized PtxModule module(CudaContext context, ModuleImage image) {
        if (closed) {
            throw new IllegalStateException("the world is closed: its modules were unloaded");
        }
        ModuleImage known = images.get(image.name());
        if (known != null && known != image && !known.sameBytes(image)) {
            throw new IllegalArgumentException(image + " has the name of another module already loaded in this world ("
                    + known + "): give different modules different names");
        }
        Map<String, PtxModule> onGpu = loaded.computeIfAbsent(context.device().ordinal(), g -> new HashMap<>());
        PtxModule module = onGpu.get(image.name());
        if (module == null) {
            DeviceViewDescriptor.requireBuiltForThisView(image);
            module = context.loadModule(image);
            onGpu.put(image.name(), module);
            images.putIfAbsent(image.name(), image);
        }
        return module;
    }

    /** The toolkit module {@code name} (class-path resource), as {@link #module(CudaContext, ModuleImage)}. */
    synchronized PtxModule module(CudaContext context, String name) {
        ModuleImage known = images.get(name);
        return module(context, known != null ? known : ModuleImage.resource(name));
    }

    /** Whether {@code name} is loaded on GPU {@code ordinal}. */
    synchronized boolean isLoaded(int ordinal, String name) {
        Map<String, PtxModule> onGpu = loaded.get(ordinal);
        return onGpu != null && onGpu.containsKey(name);
    }

    /** Unloads every module; the world's kernels must have finished. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<PtxModule> all = new ArrayList<>();
        loaded.values().forEach(m -> all.addAll(m.values()));
        loaded.clear();
        RuntimeException first = null;
        for (PtxModule m : all) {
            first = LocalRanks.collect(first, m::close);
        }
        if (first != null) {
            throw first;
        }
    }
}

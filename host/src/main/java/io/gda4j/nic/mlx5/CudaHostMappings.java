package io.gda4j.nic.mlx5;

import static io.gda4j.cuda.Driver.DEINITIALIZED;
import static io.gda4j.cuda.Driver.HOST_MEMORY_ALREADY_REGISTERED;
import static io.gda4j.cuda.Driver.NOT_SUPPORTED;
import static io.gda4j.cuda.Driver.SUCCESS;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaException;
import io.gda4j.cuda.HostRegistration;
import io.gda4j.nic.NicException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Host pages mapped into GPUs with {@code cuMemHostRegister}, shared and counted. A page can be registered once per
 * process, and libmlx5 packs several objects into one page (up to 64 doorbell records share a page; QPs of a
 * context share UAR pages), so every QP asks this registry for the pages around its rings: the first asker
 * registers them, later ones share the registration, the last one to let go unregisters. Registrations are
 * {@code PORTABLE} so that every GPU of the process can map them ({@code cuMemHostGetDevicePointer} is asked in
 * the context of the GPU that posts).
 *
 * <p>Pages someone else registered ({@code CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED} for pages this registry does
 * not know) are used as they are and never unregistered here. One process-wide instance, {@link #PROCESS}; the
 * driver calls sit behind {@link Driver} so the bookkeeping is tested without a GPU.
 */
final class CudaHostMappings {
    /** The CUDA calls the registry makes; {@link JCuda} is the real one. */
    interface Driver {
        /** {@code cuMemHostRegister(start, lengthBytes, flags)} with {@code gpu} current; returns the CUresult. */
        int register(CudaContext gpu, long start, long lengthBytes, int flags);

        /** {@code cuMemHostUnregister(start)}; returns the CUresult. */
        int unregister(CudaContext gpu, long start);

        /** {@code cuMemHostGetDevicePointer(start)} in {@code gpu}; throws {@link CudaException}. */
        long devicePointer(CudaContext gpu, long start);
    }

    /** Flags of ordinary ring memory. */
    static final int RING_FLAGS = HostRegistration.PORTABLE | HostRegistration.DEVICEMAP;
    /** Flags of the UAR page: NIC MMIO (non-coherent, physically contiguous I/O memory, cuda.h). */
    static final int IO_FLAGS = RING_FLAGS | HostRegistration.IOMEMORY;

    /** The line that enables the driver option, as NVIDIA's IBGDA instructions give it. */
    static final String PEER_MAPPING_OVERRIDE_LINE = "options nvidia NVreg_RegistryDwords=\"PeerMappingOverride=1;\"";
    /** Where the loaded NVIDIA driver shows its options. */
    static final Path NVIDIA_PARAMS = Path.of("/proc/driver/nvidia/params");

    static final CudaHostMappings PROCESS = new CudaHostMappings(new JCuda());

    /** One registration: pages, kind, whether this registry made it, and how many mappings use it. */
    private static final class Entry {
        final PageRange range;
        final boolean io;
        final boolean owned;
        final CudaContext registeredBy;
        int users;

        Entry(PageRange range, boolean io, boolean owned, CudaContext registeredBy) {
            this.range = range;
            this.io = io;
            this.owned = owned;
            this.registeredBy = registeredBy;
        }
    }

    /** What one {@link #acquire} holds; give it back with {@link #release}. */
    static final class Mapping {
        private final String what;
        private final PageRange pages;
        private final List<Entry> entries;
        private boolean released;

        private Mapping(String what, PageRange pages, List<Entry> entries) {
            this.what = what;
            this.pages = pages;
            this.entries = entries;
        }

        PageRange pages() {
            return pages;
        }

        /** Registrations this mapping made (not shared, not found already registered); for tests. */
        int ownedEntries() {
            int n = 0;
            for (Entry e : entries) {
                n += e.owned ? 1 : 0;
            }
            return n;
        }

        @Override
        public String toString() {
            return what + " " + pages;
        }
    }

    private final Driver driver;
    private final TreeMap<Long, Entry> byStart = new TreeMap<>();

    CudaHostMappings(Driver driver) {
        this.driver = driver;
    }

    /**
     * Maps {@code pages} into the process's GPUs, registering whatever part of them is not registered yet.
     *
     * @param gpu   the context to register in (the QP's GPU)
     * @param what  "send queue", "UAR doorbell register": for messages
     * @param io    whether the pages are NIC MMIO ({@link #IO_FLAGS})
     * @throws NicException naming the call, the CUDA error and what to do
     */
    synchronized Mapping acquire(CudaContext gpu, String what, PageRange pages, boolean io) {
        List<Entry> covering = new ArrayList<>();
        List<Entry> added = new ArrayList<>();
        try {
            long cursor = pages.start();
            Long from = byStart.floorKey(pages.start());
            // A copy: registering a gap adds to byStart while the walk goes on.
            for (Entry e : new ArrayList<>(byStart.tailMap(from == null ? pages.start() : from, true).values())) {
                if (e.range.start() >= pages.end()) {
                    break;
                }
                if (!e.range.overlaps(pages)) {
                    continue;
                }
                if (e.io != io) {
                    throw new NicException(String.format("the %s pages %s overlap pages %s that are mapped as %s;"
                            + " host memory and NIC registers cannot share a page", what, pages, e.range,
                            e.io ? "NIC I/O memory" : "host memory"));
                }
                if (e.range.start() > cursor) {
                    Entry gap = register(gpu, what, new PageRange(cursor, e.range.start()), io);
                    added.add(gap);
                    covering.add(gap);
                }
                covering.add(e);
                cursor = e.range.end();
            }
            if (cursor < pages.end()) {
                Entry gap = register(gpu, what, new PageRange(cursor, pages.end()), io);
                added.add(gap);
                covering.add(gap);
            }
        } catch (RuntimeException e) {
            for (Entry a : added) {
                byStart.remove(a.range.start());
                if (a.owned) {
                    try {
                        driver.unregister(a.registeredBy, a.range.start());
                    } catch (RuntimeException suppressed) {
                        e.addSuppressed(suppressed); // the registration failure is the one to report
                    }
                }
            }
            throw e;
        }
        for (Entry e : covering) {
            e.users++;
        }
        return new Mapping(what, pages, List.copyOf(covering));
    }

    /**
     * The GPU address of {@code hostAddress}, which must lie in {@code mapping}. When the mapping spans several
     * registrations they must map contiguously (as they do under unified addressing).
     */
    synchronized long deviceAddress(CudaContext gpu, Mapping mapping, long hostAddress) {
        if (!mapping.pages.contains(hostAddress)) {
            throw new IllegalArgumentException(String.format("0x%x is outside %s", hostAddress, mapping));
        }
        long delta = 0;
        for (int i = 0; i < mapping.entries.size(); i++) {
            Entry e = mapping.entries.get(i);
            long d;
            try {
                d = driver.devicePointer(gpu, e.range.start()) - e.range.start();
            } catch (CudaException ex) {
                String external = e.owned ? "" : ". These pages were registered with CUDA by other code of this"
                        + " process, maybe without CU_MEMHOSTREGISTER_DEVICEMAP";
                throw new NicException(String.format("cannot get the GPU address of the %s pages %s: %s%s",
                        mapping.what, e.range, ex.getMessage(), external), ex);
            }
            if (i > 0 && d != delta) {
                throw new NicException(String.format("the %s %s spans CUDA registrations that the GPU sees at"
                        + " different offsets (0x%x and 0x%x); it cannot be addressed as one range", mapping.what,
                        mapping.pages, delta, d));
            }
            delta = d;
        }
        return hostAddress + delta;
    }

    /** Gives a mapping back; unregisters pages nobody maps any more. Idempotent. */
    synchronized void release(Mapping mapping) {
        if (mapping.released) {
            return;
        }
        mapping.released = true;
        NicException failure = null;
        for (Entry e : mapping.entries) {
            if (--e.users > 0) {
                continue;
            }
            byStart.remove(e.range.start());
            if (!e.owned || e.registeredBy != null && e.registeredBy.isClosed()) {
                continue; // a closed context's registrations cannot be undone from it; the process exit does
            }
            int result = driver.unregister(e.registeredBy, e.range.start());
            if (result != SUCCESS && result != DEINITIALIZED) {
                NicException next = new NicException("cuMemHostUnregister of the " + mapping.what + " pages "
                        + e.range + " failed: " + CudaException.describe(result));
                if (failure == null) {
                    failure = next;
                } else {
                    failure.addSuppressed(next);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Registrations currently held, for tests and leak checks. */
    synchronized Map<Long, Integer> usersByStart() {
        Map<Long, Integer> users = new TreeMap<>();
        byStart.forEach((start, e) -> users.put(start, e.users));
        return users;
    }

    private Entry register(CudaContext gpu, String what, PageRange pages, boolean io) {
        int flags = io ? IO_FLAGS : RING_FLAGS;
        int result = driver.register(gpu, pages.start(), pages.lengthBytes(), flags);
        Entry e;
        if (result == SUCCESS) {
            e = new Entry(pages, io, true, gpu);
        } else if (result == HOST_MEMORY_ALREADY_REGISTERED) {
            e = new Entry(pages, io, false, gpu);
        } else {
            throw new NicException(registrationFailure(what, pages, io, result, nvidiaRegistryDwords()));
        }
        byStart.put(pages.start(), e);
        return e;
    }

    /**
     * The message for a failed {@code cuMemHostRegister}: the call, the pages, the CUDA error, and what to do.
     *
     * @param registryDwords the driver's RegistryDwords option as {@link #nvidiaRegistryDwords()} found it
     */
    static String registrationFailure(String what, PageRange pages, boolean io, int result,
                                      Optional<String> registryDwords) {
        String call = String.format("cuMemHostRegister(%s) of the %s pages %s failed with %s",
                io ? "PORTABLE|DEVICEMAP|IOMEMORY" : "PORTABLE|DEVICEMAP", what, pages, CudaException.describe(result));
        if (io) {
            return call + ": mapping a NIC register (the mlx5 UAR page) into the GPU needs root or the NVIDIA driver"
                    + " option PeerMappingOverride=1. Add the line '" + PEER_MAPPING_OVERRIDE_LINE + "' to"
                    + " /etc/modprobe.d/nvidia.conf and reload the nvidia module (or run update-initramfs -u and"
                    + " reboot); " + registryDwords.map(v -> "the loaded driver has RegistryDwords=\"" + v + "\""
                            + (peerMappingOverride(v) ? ", so the option is on and the driver refused for another"
                            + " reason: look for NVRM lines in dmesg" : ""))
                    .orElse("/proc/driver/nvidia/params is not readable here, so the current setting is unknown")
                    + "." + (result == NOT_SUPPORTED ? " CUDA_ERROR_NOT_SUPPORTED can also mean"
                    + " that this Linux kernel is too old for I/O memory mappings." : "")
                    + " Without it, GPU-initiated RDMA cannot ring this NIC: use the proxy transport instead.";
        }
        String hint = CudaException.hintFor(result);
        return call + ". The ring is host memory that libmlx5 allocated; CUDA cannot pin it when libmlx5 took it"
                + " from huge pages or device-contiguous memory: unset MLX_QP_ALLOC_TYPE and MLX_CQ_ALLOC_TYPE (or"
                + " set them to ANON)" + (hint.isEmpty() ? "." : "; " + hint + ".");
    }

    /** The {@code RegistryDwords} value of the loaded NVIDIA driver, if {@link #NVIDIA_PARAMS} can be read. */
    static Optional<String> nvidiaRegistryDwords() {
        try {
            return parseRegistryDwords(Files.readString(NVIDIA_PARAMS, StandardCharsets.US_ASCII));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The value of the {@code RegistryDwords: "..."} line of {@code /proc/driver/nvidia/params}. */
    static Optional<String> parseRegistryDwords(String params) {
        for (String line : params.split("\n")) {
            String l = line.strip();
            if (l.startsWith("RegistryDwords:")) {
                String value = l.substring("RegistryDwords:".length()).strip();
                if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                    value = value.substring(1, value.length() - 1);
                }
                return Optional.of(value);
            }
        }
        return Optional.empty();
    }

    /** Whether the driver's option string turns PeerMappingOverride on. */
    static boolean peerMappingOverride(String registryDwords) {
        for (String option : registryDwords.split(";")) {
            String o = option.strip().replace(" ", "");
            if (o.equalsIgnoreCase("PeerMappingOverride=1") || o.equalsIgnoreCase("PeerMappingOverride=0x1")) {
                return true;
            }
        }
        return false;
    }

    /** The registry's driver: the CUDA driver, through the cuda layer's {@link HostRegistration}. */
    static final class JCuda implements Driver {
        @Override
        public int register(CudaContext gpu, long start, long lengthBytes, int flags) {
            Cuda.requireAvailable();
            return HostRegistration.register(gpu, start, lengthBytes, flags);
        }

        @Override
        public int unregister(CudaContext gpu, long start) {
            return HostRegistration.unregister(gpu, start);
        }

        @Override
        public long devicePointer(CudaContext gpu, long start) {
            return HostRegistration.devicePointer(gpu, start,
                    String.format("cuMemHostGetDevicePointer(0x%x, %s)", start, gpu));
        }
    }
}

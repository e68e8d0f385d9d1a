package io.gda4j.nic.emulated;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.cuda.PtxModule;
import io.gda4j.nic.QpSpec;

import java.nio.ByteBuffer;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The emulated NIC on a GPU machine: rings in pinned host memory mapped into the GPUs (portable, so every context
 * reaches them), one CUDA stream per QP ({@link CudaQpExecutor}), and the {@code emulated_nic} PTX module's atomic
 * kernel loaded once per context. Peer pointers stand for the wire: copies and atomics address the peer GPU's memory
 * directly once peer access is enabled.
 */
public final class CudaPlatform implements EmulatedPlatform {
    static final String MODULE = "emulated_nic";

    private final Map<CudaContext, PtxModule> modules = new IdentityHashMap<>();
    private final AtomicChain atomics = new AtomicChain();

    @Override
    public RingMemory allocateRings(QpSpec spec, long sizeBytes) {
        MappedHostMemory memory = spec.gpu().allocateMappedHost(sizeBytes);
        return new RingMemory() {
            private final ByteBuffer buffer = memory.hostBuffer();

            @Override
            public long hostAddress() {
                return memory.hostAddress();
            }

            @Override
            public long deviceAddress() {
                return memory.deviceAddress();
            }

            @Override
            public ByteBuffer buffer() {
                return buffer.duplicate().order(buffer.order());
            }

            @Override
            public long sizeBytes() {
                return memory.sizeBytes();
            }

            @Override
            public void close() {
                memory.close();
            }
        };
    }

    @Override
    public synchronized QpExecutor createExecutor(QpSpec spec, RingMemory rings) {
        PtxModule module = moduleOf(spec);
        return new CudaQpExecutor(spec.gpu(), module.function(CudaQpExecutor.ATOMIC_KERNEL), rings.deviceAddress(),
                atomics, atomics.eventOf(spec.gpu()));
    }

    @Override
    public DeviceRingMemory allocateDeviceRings(QpSpec spec, long sizeBytes) {
        DeviceMemory memory = spec.gpu().allocate(sizeBytes);
        memory.fill((byte) 0);
        return new DeviceRingMemory() {
            @Override
            public long deviceAddress() {
                return memory.address();
            }

            @Override
            public long sizeBytes() {
                return memory.sizeBytes();
            }

            @Override
            public void copyToHost(long offset, long bytes, ByteBuffer mirror) {
                memory.copyToHost(offset, mirror.duplicate().limit((int) (offset + bytes)).position((int) offset));
            }

            @Override
            public void copyFromHost(long offset, long bytes, ByteBuffer mirror) {
                memory.copyFromHost(offset, mirror.duplicate().limit((int) (offset + bytes)).position((int) offset));
            }

            @Override
            public void close() {
                memory.close();
            }
        };
    }

    @Override
    public synchronized QpExecutor createExecutor(QpSpec spec, RingMemory rings, DeviceRingMemory deviceRings) {
        PtxModule module = moduleOf(spec);
        return new CudaQpExecutor(spec.gpu(), module.function(CudaQpExecutor.ATOMIC_KERNEL),
                deviceRings.deviceAddress(), rings.deviceAddress(), atomics, atomics.eventOf(spec.gpu()));
    }

    @Override
    public java.util.Optional<String> deviceRingsUnsupportedReason() {
        return java.util.Optional.empty();
    }

    private PtxModule moduleOf(QpSpec spec) {
        PtxModule module = modules.get(spec.gpu());
        if (module == null) {
            module = spec.gpu().loadModule(MODULE);
            modules.put(spec.gpu(), module);
        }
        return module;
    }

    @Override
    public String connect(QpSpec local, QpSpec remote) {
        CudaContext a = local.gpu();
        CudaContext b = remote.gpu();
        if (a == b || a.device().ordinal() == b.device().ordinal()) {
            return null;
        }
        try {
            a.enablePeerAccess(b);
            b.enablePeerAccess(a);
            return null;
        } catch (RuntimeException e) {
            return "no peer access between GPU " + a.device().ordinal() + " and GPU " + b.device().ordinal()
                    + " (" + e.getMessage() + "): copies are staged through the host and atomics on the peer's"
                    + " memory fail";
        }
    }

    @Override
    public String describe() {
        return "CUDA stream per QP";
    }

    @Override
    public synchronized void close() {
        RuntimeException first = null;
        for (PtxModule m : modules.values()) {
            try {
                m.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        modules.clear();
        try {
            atomics.close();
        } catch (RuntimeException e) {
            if (first == null) {
                first = e;
            } else {
                first.addSuppressed(e);
            }
        }
        if (first != null) {
            throw first;
        }
    }
}

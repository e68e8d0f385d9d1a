package io.gda4j.proxy;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.HostRegistration;
import io.gda4j.cuda.IpcMemory;

import java.nio.ByteBuffer;

/**
 * {@link CrossProcessMemory} on a GPU machine, where the emulated NIC's work runs on CUDA streams of the posting
 * process's GPU.
 * <ul>
 *   <li>{@link #credits}: host memory ({@link MemfdMemory}); a peer's credit blocks, which this process's NIC
 *       writes, are registered with CUDA here ({@code cuMemHostRegister}, portable and device-mapped) so that its
 *       stream writes reach them. This process's own blocks are only read by its proxy thread.</li>
 *   <li>{@link #lockLine}: GPU memory shared by CUDA IPC, as ibgda's lock line is: the emulated NIC takes it with
 *       GPU atomics, which are atomic across GPUs only in GPU memory over a link that carries atomics.</li>
 * </ul>
 */
final class CudaCrossProcessMemory {
    private CudaCrossProcessMemory() {
    }

    /** Credit blocks in host memory, peers' blocks mapped into {@code gpu}. */
    static CrossProcessMemory credits(CudaContext gpu) {
        MemfdMemory host = new MemfdMemory();
        return new CrossProcessMemory() {
            @Override
            public Exported export(int bytes, String label) {
                return host.export(bytes, label);
            }

            @Override
            public Opened open(byte[] handle, int bytes, String label) {
                Opened mapped = host.open(handle, bytes, label);
                try {
                    return new Registered(gpu, mapped, MemfdMemory.pages(bytes), label);
                } catch (RuntimeException e) {
                    mapped.close();
                    throw e;
                }
            }
        };
    }

    /** The lock line in {@code gpu}'s memory, peers' lines mapped by CUDA IPC. */
    static CrossProcessMemory lockLine(CudaContext gpu) {
        return new CrossProcessMemory() {
            @Override
            public Exported export(int bytes, String label) {
                DeviceMemory words = gpu.allocate(bytes);
                try {
                    words.fill((byte) 0);
                    byte[] handle = words.exportIpcHandle();
                    return new Exported() {
                        @Override
                        public long address() {
                            return words.address();
                        }

                        @Override
                        public ByteBuffer buffer() {
                            return null;
                        }

                        @Override
                        public byte[] handle() {
                            return handle.clone();
                        }

                        @Override
                        public void close() {
                            words.close();
                        }
                    };
                } catch (RuntimeException e) {
                    words.close();
                    throw e;
                }
            }

            @Override
            public Opened open(byte[] handle, int bytes, String label) {
                if (handle.length != IpcMemory.HANDLE_BYTES) {
                    throw new ProxyException(label + " was published as " + handle.length + " bytes, not a CUDA IPC"
                            + " handle: every process of a job must run the same gda4j version");
                }
                IpcMemory m = gpu.openIpcMemory(handle, bytes, label);
                return new Opened() {
                    @Override
                    public long address() {
                        return m.address();
                    }

                    @Override
                    public void close() {
                        m.close();
                    }
                };
            }
        };
    }

    /** A peer's host memory mapped here and registered with CUDA; closing unregisters it, then unmaps it. */
    private static final class Registered implements CrossProcessMemory.Opened {
        private final CudaContext gpu;
        private final CrossProcessMemory.Opened mapped;
        private final long device;
        private boolean closed;

        Registered(CudaContext gpu, CrossProcessMemory.Opened mapped, int bytes, String label) {
            this.gpu = gpu;
            this.mapped = mapped;
            Cuda.check(HostRegistration.register(gpu, mapped.address(), bytes, HostRegistration.PORTABLE
                    | HostRegistration.DEVICEMAP), "cuMemHostRegister(" + bytes + " bytes of " + label + " at 0x"
                    + Long.toHexString(mapped.address()) + ")");
            try {
                this.device = HostRegistration.devicePointer(gpu, mapped.address(),
                        "cuMemHostGetDevicePointer(" + label + ")");
            } catch (RuntimeException e) {
                HostRegistration.unregister(gpu, mapped.address());
                throw e;
            }
        }

        @Override
        public long address() {
            return device;
        }

        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            try {
                if (!gpu.isClosed()) {
                    Cuda.check(HostRegistration.unregister(gpu, mapped.address()),
                            "cuMemHostUnregister(0x" + Long.toHexString(mapped.address()) + ")");
                }
            } finally {
                mapped.close();
            }
        }
    }
}

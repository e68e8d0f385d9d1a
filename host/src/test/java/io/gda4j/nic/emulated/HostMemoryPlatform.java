package io.gda4j.nic.emulated;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.nic.QpSpec;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The emulated NIC's platform seam over plain host memory, for CPU tests: rings and "GPU memory" are JNA
 * allocations, the executor carries out each operation at once on the calling (engine) thread, and every byte it
 * writes is checked against the ranges the test allowed (registered regions and the QP's CQ), so a validation gap
 * shows up as a test failure rather than as memory corruption. Public for the proxy module's CPU tests (the host
 * test jar), which run its verbs handler on the emulated NIC over this memory.
 */
public final class HostMemoryPlatform implements EmulatedPlatform {
    private static final VarHandle LONG_BE = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    static final VarHandle LONG_NATIVE = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    /** Ranges executors may write: [start, end). */
    private final List<long[]> writable = new ArrayList<>();
    private final List<Memory> keepAlive = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    long operations;
    /** Atomics the engine asked to run under a responder's lock, and the last lock named. */
    long lockedAtomics;
    long lastLock;
    /** Atomics the engine asked to split (strict atomics). */
    long splitAtomics;
    /**
     * Another writer's access to the target word, run where it can interleave with a NIC atomic: in the pause of a
     * split atomic, or just before an unsplit one. Null: none. Tests set it to race the NIC deterministically instead
     * of hoping a thread gets scheduled inside a pause of a few hundred nanoseconds.
     */
    volatile java.util.function.LongConsumer interleavedWriter;

    /** Host memory of {@code bytes}, 64-byte aligned, zeroed; its address stands for a GPU address. */
    public synchronized long allocate(long bytes) {
        Memory m = new Memory(bytes + 64);
        m.clear();
        keepAlive.add(m);
        long address = Pointer.nativeValue(m);
        return (address + 63) & -64L;
    }

    /** Lets executors write [address, address + bytes): a registered region, or a NIC's own words. */
    public synchronized void allowWrites(long address, long bytes) {
        writable.add(new long[] {address, address + bytes});
    }

    private synchronized void checkWrite(long address, long bytes, String what) {
        for (long[] r : writable) {
            if (address >= r[0] && address + bytes <= r[1] && bytes >= 0) {
                return;
            }
        }
        violations.add(String.format("%s wrote [0x%x, +%d) outside every registered region", what, address, bytes));
        throw new AssertionError(violations.get(violations.size() - 1));
    }

    @Override
    public RingMemory allocateRings(QpSpec spec, long sizeBytes) {
        long address = allocate(sizeBytes);
        // The NIC's own staging (fetched values and WRITE payloads on their way) lies behind the rings.
        long staging = EmulatedQp.fetchStagingOffset(spec);
        allowWrites(address + staging, sizeBytes - staging);
        ByteBuffer buffer = new Pointer(address).getByteBuffer(0, sizeBytes).order(ByteOrder.nativeOrder());
        return new RingMemory() {
            @Override
            public long hostAddress() {
                return address;
            }

            @Override
            public long deviceAddress() {
                return address;
            }

            @Override
            public ByteBuffer buffer() {
                return buffer.duplicate().order(ByteOrder.nativeOrder());
            }

            @Override
            public long sizeBytes() {
                return sizeBytes;
            }

            @Override
            public void close() {
            }
        };
    }

    /** "GPU memory" for rings is another host allocation here: the engine must copy to and from it all the same. */
    @Override
    public DeviceRingMemory allocateDeviceRings(QpSpec spec, long sizeBytes) {
        long address = allocate(sizeBytes);
        ByteBuffer gpu = new Pointer(address).getByteBuffer(0, sizeBytes).order(ByteOrder.nativeOrder());
        deviceRingCopies = 0;
        return new DeviceRingMemory() {
            @Override
            public long deviceAddress() {
                return address;
            }

            @Override
            public long sizeBytes() {
                return sizeBytes;
            }

            @Override
            public void copyToHost(long offset, long bytes, ByteBuffer mirror) {
                deviceRingCopies++;
                mirror.put((int) offset, gpu, (int) offset, (int) bytes);
            }

            @Override
            public void copyFromHost(long offset, long bytes, ByteBuffer mirror) {
                gpu.put((int) offset, mirror, (int) offset, (int) bytes);
            }

            @Override
            public void close() {
            }
        };
    }

    /** Copies the engine made out of device rings since they were allocated. */
    volatile long deviceRingCopies;

    @Override
    public java.util.Optional<String> deviceRingsUnsupportedReason() {
        return java.util.Optional.empty();
    }

    @Override
    public QpExecutor createExecutor(QpSpec spec, RingMemory rings) {
        return executor(rings.buffer(), null);
    }

    @Override
    public QpExecutor createExecutor(QpSpec spec, RingMemory rings, DeviceRingMemory deviceRings) {
        ByteBuffer gpu = new Pointer(deviceRings.deviceAddress()).getByteBuffer(0, deviceRings.sizeBytes())
                .order(ByteOrder.nativeOrder());
        return executor(gpu, rings.buffer());
    }

    /** Tails go to {@code ring}; with a {@code mirror} (device rings), each CQE's body is copied from it first. */
    private QpExecutor executor(ByteBuffer ring, ByteBuffer mirror) {
        return new QpExecutor() {
            @Override
            public void copy(long dst, long src, long bytes) {
                operations++;
                checkWrite(dst, bytes, "copy");
                byte[] data = new Pointer(src).getByteArray(0, (int) bytes);
                new Pointer(dst).write(0, data, 0, data.length);
            }

            @Override
            public void zero(long dst, long bytes) {
                operations++;
                checkWrite(dst, bytes, "zero");
                new Pointer(dst).setMemory(0, bytes, (byte) 0);
            }

            @Override
            public void store64(long dst, long value) {
                operations++;
                checkWrite(dst, 8, "store64");
                // Ordered after the NIC's earlier writes: another thread (a proxy thread's poll) may read the word.
                VarHandle.releaseFence();
                new Pointer(dst).setLong(0, value);
            }

            @Override
            public void atomic(int opcode, long target, long swapAdd, long compare, long fetchDst, long splitNanos,
                               long lockAddress) {
                operations++;
                if (lockAddress != 0) {
                    lockedAtomics++;
                    lastLock = lockAddress;
                }
                splitAtomics += splitNanos > 0 ? 1 : 0;
                checkWrite(target, 8, "atomic");
                Pointer p = new Pointer(target);
                long old;
                java.util.function.LongConsumer other = interleavedWriter;
                if (splitNanos == 0) {
                    if (other != null) {
                        other.accept(target);
                    }
                    // One atomic of the memory (what atomicAdd_system is on the GPU): atomic with every writer.
                    ByteBuffer word = p.getByteBuffer(0, 8).order(ByteOrder.nativeOrder());
                    old = opcode == Mlx5Opcode.ATOMIC_FA ? (long) LONG_NATIVE.getAndAdd(word, 0, swapAdd)
                            : (long) LONG_NATIVE.compareAndExchange(word, 0, compare, swapAdd);
                } else {
                    // A read and a write on the (single) engine thread: atomic with this NIC's other atomics, but a
                    // concurrent writer (a test's CPU atomics, standing for the GPU's) falling in between is lost.
                    old = p.getLong(0);
                    long until = System.nanoTime() + splitNanos;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                    if (other != null) {
                        other.accept(target);
                    }
                    if (opcode == Mlx5Opcode.ATOMIC_FA) {
                        p.setLong(0, old + swapAdd);
                    } else if (old == compare) {
                        p.setLong(0, swapAdd);
                    }
                }
                if (fetchDst != 0) {
                    checkWrite(fetchDst, 8, "atomic fetch");
                    new Pointer(fetchDst).setLong(0, old);
                }
            }

            @Override
            public void publishCqe(long cqeTailOffset, long tailBigEndian) {
                if (mirror != null) {
                    int body = (int) cqeTailOffset - io.gda4j.mlx5.CqeDescriptor.TAIL_OFFSET;
                    ring.put(body, mirror, body, io.gda4j.mlx5.CqeDescriptor.TAIL_OFFSET);
                }
                LONG_BE.setRelease(ring, (int) cqeTailOffset, tailBigEndian);
            }

            @Override
            public void drain() {
            }

            @Override
            public void close() {
            }
        };
    }

    @Override
    public String connect(QpSpec local, QpSpec remote) {
        return null;
    }

    @Override
    public String describe() {
        return "host memory (CPU test)";
    }
}

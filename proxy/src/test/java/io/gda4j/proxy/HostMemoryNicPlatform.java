package io.gda4j.proxy;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.emulated.EmulatedPlatform;
import io.gda4j.nic.emulated.QpExecutor;
import io.gda4j.nic.emulated.RingMemory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The emulated NIC's platform over plain host memory, for the proxy's CPU tests: "GPU memory" and rings are JNA
 * allocations and the executor carries each operation out at once on the engine thread (copies, atomics as one
 * atomic of the memory, CQE publication with a release store), so the NIC's decoding, key and range checks, error
 * CQEs and the proxy's verbs handler run without CUDA.
 */
final class HostMemoryNicPlatform implements EmulatedPlatform {
    private static final VarHandle LONG_BE = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG_NATIVE = MethodHandles.byteBufferViewVarHandle(long[].class,
            ByteOrder.nativeOrder());

    private final List<Memory> keepAlive = new ArrayList<>();

    /** Zeroed host memory of {@code bytes}, 64-byte aligned; it stands for GPU memory. */
    synchronized long allocate(long bytes) {
        Memory m = new Memory(bytes + 64);
        m.clear();
        keepAlive.add(m);
        return (Pointer.nativeValue(m) + 63) & -64L;
    }

    /** A credit-block allocator for {@link VerbsSession}. */
    VerbsSession.WordMemory words(int bytes) {
        long address = allocate(bytes);
        ByteBuffer view = new Pointer(address).getByteBuffer(0, bytes);
        return new VerbsSession.WordMemory() {
            @Override
            public long address() {
                return address;
            }

            @Override
            public ByteBuffer buffer() {
                return view.duplicate();
            }

            @Override
            public void close() {
            }
        };
    }

    @Override
    public RingMemory allocateRings(QpSpec spec, long sizeBytes) {
        long address = allocate(sizeBytes);
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

    @Override
    public QpExecutor createExecutor(QpSpec spec, RingMemory rings) {
        ByteBuffer ring = rings.buffer();
        return new QpExecutor() {
            @Override
            public void copy(long dst, long src, long bytes) {
                byte[] data = new Pointer(src).getByteArray(0, (int) bytes);
                new Pointer(dst).write(0, data, 0, data.length);
            }

            @Override
            public void zero(long dst, long bytes) {
                new Pointer(dst).setMemory(0, bytes, (byte) 0);
            }

            @Override
            public void store64(long dst, long value) {
                LONG_NATIVE.setRelease(new Pointer(dst).getByteBuffer(0, 8), 0, value);
            }

            @Override
            public void atomic(int opcode, long target, long swapAdd, long compare, long fetchDst, long splitNanos,
                               long lockAddress) {
                ByteBuffer word = new Pointer(target).getByteBuffer(0, 8).order(ByteOrder.nativeOrder());
                long old = opcode == Mlx5Opcode.ATOMIC_FA ? (long) LONG_NATIVE.getAndAdd(word, 0, swapAdd)
                        : (long) LONG_NATIVE.compareAndExchange(word, 0, compare, swapAdd);
                if (fetchDst != 0) {
                    new Pointer(fetchDst).setLong(0, old);
                }
            }

            @Override
            public void publishCqe(long cqeTailOffset, long tailBigEndian) {
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
        return "host memory (proxy CPU test)";
    }
}

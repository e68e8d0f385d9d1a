package io.gda4j.proxy;

import com.sun.jna.Pointer;

import io.gda4j.nic.emulated.HostMemoryPlatform;

import java.nio.ByteBuffer;

/**
 * {@link MemfdMemory} for the emulated NIC over {@link HostMemoryPlatform}: what this process maps of another's it
 * also lets its NIC write (the platform fails any write outside the ranges it was told of, so a WQE that reached a
 * peer's memory at the peer's own address instead of through the mapping fails the test).
 */
final class PlatformMemory implements CrossProcessMemory {
    private final MemfdMemory files = new MemfdMemory();
    private final HostMemoryPlatform platform;

    PlatformMemory(HostMemoryPlatform platform) {
        this.platform = platform;
    }

    @Override
    public Exported export(int bytes, String label) {
        return files.export(bytes, label);
    }

    @Override
    public Opened open(byte[] handle, int bytes, String label) {
        Opened mapped = files.open(handle, bytes, label);
        platform.allowWrites(mapped.address(), bytes);
        return mapped;
    }

    /**
     * A credit block for {@link VerbsSession} in {@code platform}'s host memory, which the peer's NIC may write (by
     * rkey, or through the platform's ranges); the platform keeps it alive.
     */
    static VerbsSession.WordMemory words(HostMemoryPlatform platform, int bytes) {
        long address = platform.allocate(bytes);
        platform.allowWrites(address, bytes);
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
}

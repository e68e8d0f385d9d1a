package io.gda4j.proxy;

import io.gda4j.nic.emulated.HostMemoryPlatform;

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
}

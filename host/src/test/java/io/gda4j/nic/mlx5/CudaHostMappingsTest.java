package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaException;
import io.gda4j.nic.NicException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import jcuda.driver.CUresult;

import org.junit.jupiter.api.Test;

/** The page-sharing bookkeeping around cuMemHostRegister, against a fake driver, and its error messages. */
class CudaHostMappingsTest {
    static final long PAGE = 4096;
    static final long GPU_OFFSET = 1L << 40;

    /** Records calls; registers everything unless told otherwise. */
    static final class FakeDriver implements CudaHostMappings.Driver {
        final List<String> calls = new ArrayList<>();
        int nextResult = CUresult.CUDA_SUCCESS;
        long offset = GPU_OFFSET;

        @Override
        public int register(CudaContext gpu, long start, long lengthBytes, int flags) {
            calls.add(String.format("register 0x%x +%d flags %d", start, lengthBytes, flags));
            return nextResult;
        }

        @Override
        public int unregister(CudaContext gpu, long start) {
            calls.add(String.format("unregister 0x%x", start));
            return CUresult.CUDA_SUCCESS;
        }

        @Override
        public long devicePointer(CudaContext gpu, long start) {
            if (offset < 0) {
                throw new CudaException(CUresult.CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer");
            }
            return start + (start >= 0x900000 ? 2 * offset : offset);
        }
    }

    final FakeDriver driver = new FakeDriver();
    final CudaHostMappings mappings = new CudaHostMappings(driver);

    @Test
    void sharedDoorbellRecordPageIsRegisteredOnceAndUnregisteredByTheLastUser() {
        PageRange dbrPage = PageRange.around(0x200040, 8, PAGE);
        CudaHostMappings.Mapping qpDbr = mappings.acquire(null, "QP doorbell record", dbrPage, false);
        CudaHostMappings.Mapping cqDbr = mappings.acquire(null, "CQ doorbell record",
                PageRange.around(0x200080, 8, PAGE), false);
        assertEquals(List.of("register 0x200000 +4096 flags 3"), driver.calls, "PORTABLE|DEVICEMAP, once");
        assertEquals(Map.of(0x200000L, 2), mappings.usersByStart());
        assertEquals(0x200080 + GPU_OFFSET, mappings.deviceAddress(null, cqDbr, 0x200080));
        mappings.release(qpDbr);
        mappings.release(qpDbr);
        assertEquals(1, driver.calls.size(), "still used by the CQ, and release is idempotent");
        mappings.release(cqDbr);
        assertEquals("unregister 0x200000", driver.calls.get(1));
        assertEquals(Map.of(), mappings.usersByStart());
    }

    @Test
    void theUarPageIsIoMemory() {
        mappings.acquire(null, "UAR doorbell register", PageRange.around(0x300800, 8, PAGE), true);
        assertEquals(List.of("register 0x300000 +4096 flags 7"), driver.calls, "PORTABLE|DEVICEMAP|IOMEMORY");
    }

    @Test
    void onlyTheUncoveredPartOfAnOverlappingRangeIsRegistered() {
        CudaHostMappings.Mapping a = mappings.acquire(null, "send queue", new PageRange(0x400000, 0x402000), false);
        CudaHostMappings.Mapping b = mappings.acquire(null, "CQ ring", new PageRange(0x401000, 0x404000), false);
        assertEquals(List.of("register 0x400000 +8192 flags 3", "register 0x402000 +8192 flags 3"), driver.calls);
        assertEquals(0x403010 + GPU_OFFSET, mappings.deviceAddress(null, b, 0x403010));
        mappings.release(a);
        assertEquals(2, driver.calls.size(), "the first registration still backs part of b");
        mappings.release(b);
        assertTrue(driver.calls.containsAll(List.of("unregister 0x400000", "unregister 0x402000")));
    }

    @Test
    void pagesRegisteredElsewhereAreUsedButNeverUnregistered() {
        driver.nextResult = CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
        CudaHostMappings.Mapping m = mappings.acquire(null, "CQ ring", new PageRange(0x500000, 0x501000), false);
        assertEquals(0, m.ownedEntries());
        assertEquals(0x500000 + GPU_OFFSET, mappings.deviceAddress(null, m, 0x500000));
        mappings.release(m);
        assertEquals(1, driver.calls.size(), "no unregister of someone else's registration");
    }

    @Test
    void aRangeTheGpuSeesInTwoPiecesIsRefused() {
        CudaHostMappings.Mapping m1 = mappings.acquire(null, "a", new PageRange(0x8ff000, 0x900000), false);
        CudaHostMappings.Mapping m2 = mappings.acquire(null, "b", new PageRange(0x8ff000, 0x901000), false);
        assertEquals(0x8ff000 + GPU_OFFSET, mappings.deviceAddress(null, m1, 0x8ff000));
        NicException e = assertThrows(NicException.class, () -> mappings.deviceAddress(null, m2, 0x8ff000));
        assertTrue(e.getMessage().contains("spans CUDA registrations that the GPU sees at different offsets"),
                e.getMessage());
    }

    @Test
    void aHostPageCannotBeBothMemoryAndANicRegister() {
        mappings.acquire(null, "CQ ring", new PageRange(0x600000, 0x601000), false);
        NicException e = assertThrows(NicException.class,
                () -> mappings.acquire(null, "UAR doorbell register", new PageRange(0x600000, 0x601000), true));
        assertTrue(e.getMessage().contains("cannot share a page"), e.getMessage());
    }

    @Test
    void aFailedRegistrationLeavesNothingBehind() {
        mappings.acquire(null, "send queue", new PageRange(0x700000, 0x701000), false);
        driver.nextResult = CUresult.CUDA_ERROR_INVALID_VALUE;
        NicException e = assertThrows(NicException.class,
                () -> mappings.acquire(null, "CQ ring", new PageRange(0x6ff000, 0x702000), false));
        assertTrue(e.getMessage().startsWith("cuMemHostRegister(PORTABLE|DEVICEMAP) of the CQ ring pages"
                + " [0x6ff000, +4096) failed with CUDA_ERROR_INVALID_VALUE (1)"), e.getMessage());
        assertEquals(Map.of(0x700000L, 1), mappings.usersByStart());
    }

    @Test
    void anUnmappableExternalRegistrationSaysSo() {
        driver.nextResult = CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
        driver.offset = -1;
        CudaHostMappings.Mapping m = mappings.acquire(null, "CQ ring", new PageRange(0x500000, 0x501000), false);
        NicException e = assertThrows(NicException.class, () -> mappings.deviceAddress(null, m, 0x500000));
        assertTrue(e.getMessage().contains("maybe without CU_MEMHOSTREGISTER_DEVICEMAP"), e.getMessage());
    }

    @Test
    void theUarFailureSaysHowToEnablePeerMappingOverride() {
        String message = CudaHostMappings.registrationFailure("UAR doorbell register of rank 0 -> rank 1",
                new PageRange(0x7f0000001000L, 0x7f0000002000L), true, CUresult.CUDA_ERROR_NOT_PERMITTED,
                Optional.of(""));
        assertEquals("cuMemHostRegister(PORTABLE|DEVICEMAP|IOMEMORY) of the UAR doorbell register of rank 0 -> rank 1"
                + " pages [0x7f0000001000, +4096) failed with CUDA_ERROR_NOT_PERMITTED (800): mapping a NIC register"
                + " (the mlx5 UAR page) into the GPU needs root or the NVIDIA driver option PeerMappingOverride=1."
                + " Add the line 'options nvidia NVreg_RegistryDwords=\"PeerMappingOverride=1;\"' to"
                + " /etc/modprobe.d/nvidia.conf and reload the nvidia module (or run update-initramfs -u and"
                + " reboot); the loaded driver has RegistryDwords=\"\". Without it, GPU-initiated RDMA cannot ring"
                + " this NIC: use the proxy transport instead.", message);
        String unsupported = CudaHostMappings.registrationFailure("UAR", new PageRange(0x1000, 0x2000), true,
                CUresult.CUDA_ERROR_NOT_SUPPORTED, Optional.empty());
        assertTrue(unsupported.contains("/proc/driver/nvidia/params is not readable here"), unsupported);
        assertTrue(unsupported.contains("this Linux kernel is too old for I/O memory mappings"), unsupported);
        String on = CudaHostMappings.registrationFailure("UAR", new PageRange(0x1000, 0x2000), true,
                CUresult.CUDA_ERROR_NOT_PERMITTED, Optional.of("PeerMappingOverride=1;"));
        assertTrue(on.contains("RegistryDwords=\"PeerMappingOverride=1;\", so the option is on and the driver"
                + " refused for another reason: look for NVRM lines in dmesg."), on);
    }

    @Test
    void readsTheDriversRegistryDwords() {
        String params = "ResmanDebugLevel: 4294967295\nRegistryDwords: \"PeerMappingOverride=1;\"\n"
                + "RegistryDwordsPerDevice: \"\"\n";
        assertEquals(Optional.of("PeerMappingOverride=1;"), CudaHostMappings.parseRegistryDwords(params));
        assertEquals(Optional.empty(), CudaHostMappings.parseRegistryDwords("EnableMSI: 1\n"));
        assertTrue(CudaHostMappings.peerMappingOverride("RMUseSwI2c=1; PeerMappingOverride=1;"));
        assertFalse(CudaHostMappings.peerMappingOverride("PeerMappingOverride=0;"));
        assertFalse(CudaHostMappings.peerMappingOverride(""));
    }
}

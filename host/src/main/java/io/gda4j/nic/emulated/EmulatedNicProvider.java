package io.gda4j.nic.emulated;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaStatus;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicOptions;
import io.gda4j.nic.NicProvider;

import java.util.Optional;

/** Opens {@link EmulatedNic}s over CUDA; available wherever CUDA is. */
public final class EmulatedNicProvider implements NicProvider {
    @Override
    public String name() {
        return Nic.EMULATED;
    }

    @Override
    public int autoPreference() {
        return 100;
    }

    @Override
    public Optional<String> unavailableReason() {
        CudaStatus status = Cuda.status();
        return status.available() ? Optional.empty()
                : Optional.of("the emulated NIC executes WQEs with CUDA: " + status.reason());
    }

    /**
     * Strict mode: one emulated NIC per GPU, each with its own protection domain and keys, so a key used on the
     * wrong NIC fails as it would on a machine with a ConnectX per GPU; lenient: one NIC for all.
     */
    @Override
    public boolean oneNicPerGpu() {
        return EmulatedNicConfig.resolve().strict();
    }

    @Override
    public Nic open(NicOptions options) {
        return new EmulatedNic(new CudaPlatform(), EmulatedNicConfig.resolve());
    }
}

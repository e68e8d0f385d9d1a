package io.gda4j.p2p;

import io.gda4j.transport.Capability;
import io.gda4j.transport.Transport;
import io.gda4j.transport.Transports;
import io.gda4j.world.DeviceErrorDecoder;
import io.gda4j.world.ErrorRecord;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Words p2p's device error record ({@code gda4j/transport/p2p/p2p.cuh}): an ADD refused over a link without native
 * peer atomics. Registered in {@code META-INF/services/io.gda4j.world.DeviceErrorDecoder}.
 */
public final class P2pErrorDecoder implements DeviceErrorDecoder {
    /** {@code ERROR_NO_NATIVE_ATOMICS}: an ADD (SIGNAL_ADD, atomic_add) over a link without native atomics (PCIe). */
    public static final int NO_NATIVE_ATOMICS = 15;

    @Override
    public Map<Integer, String> codes() {
        return Map.of(NO_NATIVE_ATOMICS, "NO_NATIVE_ATOMICS");
    }

    @Override
    public String describe(ErrorRecord r, String where, Duration waitTimeout) {
        // The transports that reach a peer without storing into its memory, from the table.
        String others = Arrays.stream(Transport.values()).filter(t -> t != Transport.NONE && !t.has(Capability.DIRECT))
                .map(Transport::label).collect(Collectors.joining(" or "));
        return String.format(Locale.ROOT,
                "%s at heap offset 0x%x: the p2p link to rank %d has no native atomics (PCIe without"
                        + " CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED; '*' in the peer matrix of gda4j"
                        + " info), so an atomic add there would be a read and a write and lose concurrent"
                        + " updates; nothing was written. Signal with SignalOp.SET, or reach that peer over"
                        + " the %s transport (%s).",
                where, r.offset(), r.peer(), others, Transports.TRANSPORT_ENV);
    }
}

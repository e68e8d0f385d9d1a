package io.gda4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.proxy.ProxyConfig;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code --proxy-handler} of latency, bandwidth and moe: described in the help, checked before any GPU is touched. */
class ProxyHandlerOptionTest {
    @ParameterizedTest
    @ValueSource(strings = {"latency", "bandwidth", "moe"})
    void theHelpSaysWhenEachHandlerIsUsed(String command) {
        CliRun r = CliRun.of(command, "--help");
        assertEquals(0, r.code(), r.err());
        String help = r.out().replaceAll("\\s+", " ");
        assertTrue(help.contains("--proxy-handler"), help);
        assertTrue(help.contains("auto (copy engine for a peer on this host, verbs across hosts), copy or verbs"), help);
        assertTrue(help.contains(ProxyConfig.HANDLER_ENV), help);
    }

    @ParameterizedTest
    @ValueSource(strings = {"latency", "bandwidth", "moe"})
    void anUnknownHandlerIsAOneLineUsageError(String command) {
        CliRun r = CliRun.of(command, "--transport", "proxy", "--proxy-handler", "rdma");
        assertEquals(2, r.code(), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains("--proxy-handler") && r.err().contains("auto, copy or verbs"), r.err());
    }

    @ParameterizedTest
    @ValueSource(strings = {"latency", "bandwidth", "moe"})
    void aHandlerForAnotherTransportIsAUsageError(String command) {
        CliRun r = CliRun.of(command, "--transport", "p2p", "--proxy-handler", "verbs");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("add --transport proxy"), r.err());
    }
}

package io.gda4j.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.config.Settings;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicConfig;
import io.gda4j.nic.NicSelection;
import io.gda4j.nic.Nics;
import io.gda4j.transport.RemotePeer;

import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Whether the proxy connects a rank of another process, decided without a GPU: it does (copies into the IPC-mapped
 * heap, signals on the direct path), except with the peer-stream signal path, which needs the peer's context. The
 * verbs handler forced connects processes over the emulated NIC (its exchange is {@link VerbsAcrossProcessesTest}'s),
 * not over mlx5 yet, and not between GPUs whose link carries no atomics.
 */
class ProxyAcrossProcessesTest {
    static final RemotePeer PEER = new RemotePeer(1, 1L << 40, 64L << 20, false, true, "rank 1 (pid 7 on h)");

    @AfterEach
    void clear() {
        System.clearProperty(ProxyConfig.SIGNAL_PATH_PROP_NAME);
        System.clearProperty(ProxyConfig.HANDLER_PROP_NAME);
    }

    @Test
    void theVerbsHandlerConnectsProcessesOverTheEmulatedNic() {
        assertEquals(Optional.empty(), ProxyTransport.verbsAcrossProcessesReason(Nic.EMULATED, PEER));
    }

    /** Over mlx5 each side's QP is connected to the endpoint the peer published: no GPU atomics are involved. */
    @Test
    void theVerbsHandlerConnectsProcessesOverMlx5EvenBetweenGpusWithoutAtomics() {
        assertEquals(Optional.empty(), ProxyTransport.verbsAcrossProcessesReason(Nic.MLX5, PEER));
        RemotePeer pcie = new RemotePeer(1, 1L << 40, 64L << 20, false, false, "rank 1 (pid 7 on h)");
        assertEquals(Optional.empty(), ProxyTransport.verbsAcrossProcessesReason(Nic.MLX5, pcie));
    }

    @Test
    void theVerbsHandlerBetweenGpusWithoutAtomicsIsRefusedNamingThePeer() {
        RemotePeer pcie = new RemotePeer(1, 1L << 40, 64L << 20, false, false, "rank 1 (pid 7 on h)");
        Optional<String> why = ProxyTransport.verbsAcrossProcessesReason(Nic.EMULATED, pcie);
        assertTrue(why.isPresent() && why.get().contains("rank 1 (pid 7 on h)'s GPU carries no atomics")
                && why.get().contains(NicConfig.NIC_ENV + " to mlx5") && why.get().contains(ProxyConfig.HANDLER_ENV),
                why.toString());
    }

    /** The transport's own answer with verbs forced: what this machine's NIC choice allows, never a flat refusal. */
    @Test
    void theVerbsHandlerForcedIsAcceptedAcrossProcessesWhereANicIs() {
        System.setProperty(ProxyConfig.HANDLER_PROP_NAME, "verbs");
        Optional<String> why = new ProxyTransport().unavailableAcrossProcesses(null, PEER);
        NicSelection nic = Nics.select(Settings.ofProcess().get(NicConfig.NIC));
        if (nic.found()) {
            assertEquals(ProxyTransport.verbsAcrossProcessesReason(nic.provider().name(), PEER), why);
        } else {
            assertTrue(why.isPresent() && why.get().contains("needs a NIC: " + nic.reason()), why.toString());
        }
        System.setProperty(ProxyConfig.HANDLER_PROP_NAME, "auto");
        assertTrue(new ProxyTransport().unavailableAcrossProcesses(null, PEER).isEmpty(),
                "auto: a peer of this host takes the copy engine");
    }

    @Test
    void infoSaysWhichHandlerEachKindOfPeerGets() {
        String auto = new ProxyTransport().describeHandlers();
        assertTrue(auto.contains("handler auto (" + ProxyConfig.HANDLER_ENV + ")")
                && auto.contains("peers of this host use the copy engine")
                && auto.contains("peers of other hosts use verbs"), auto);
        System.setProperty(ProxyConfig.HANDLER_PROP_NAME, "verbs");
        String verbs = new ProxyTransport().describeHandlers();
        assertTrue(verbs.contains("peers of this host use verbs"), verbs);
        NicSelection selected = Nics.select(Settings.ofProcess().get(NicConfig.NIC));
        boolean emulated = selected.found() && selected.provider().name().equals(Nic.EMULATED);
        assertTrue(verbs.contains(emulated ? "in this process and in other processes of this host"
                : "in this process and in other processes (RC endpoints exchanged on the bootstrap)"), verbs);
    }

    /**
     * A rank of another host: the copy engine cannot reach it (the copy handler refuses, naming the setting), auto
     * gives it the verbs handler, and the emulated NIC takes it only inside one machine (a named host).
     */
    @Test
    void aPeerOnAnotherHostTakesTheVerbsHandlerNeverTheCopyEngine() {
        RemotePeer far = RemotePeer.onAnotherHost(1, 64L << 20, false, null, "rank 1 (pid 7 on b)");
        System.setProperty(ProxyConfig.HANDLER_PROP_NAME, "copy");
        String copy = new ProxyTransport().unavailableAcrossProcesses(null, far).orElseThrow();
        assertTrue(copy.contains("rank 1 (pid 7 on b) runs on another host") && copy.contains(ProxyConfig.HANDLER_ENV),
                copy);
        System.setProperty(ProxyConfig.HANDLER_PROP_NAME, "auto");
        Optional<String> auto = new ProxyTransport().unavailableAcrossProcesses(null, far);
        NicSelection nic = Nics.select(Settings.ofProcess().get(NicConfig.NIC));
        assertEquals(nic.found() ? ProxyTransport.verbsAcrossProcessesReason(nic.provider().name(), far)
                : Optional.of("the verbs proxy handler needs a NIC: " + nic.reason()), auto);
        String emulated = ProxyTransport.verbsAcrossProcessesReason(Nic.EMULATED, far).orElseThrow();
        assertTrue(emulated.contains("inside one machine") && emulated.contains("--nic mlx5"), emulated);
        RemotePeer named = RemotePeer.onAnotherHost(1, 64L << 20, true, new byte[64], "rank 1 (pid 7 on b)");
        assertEquals(Optional.empty(), ProxyTransport.verbsAcrossProcessesReason(Nic.EMULATED, named));
        assertEquals(Optional.empty(), ProxyTransport.verbsAcrossProcessesReason(Nic.MLX5, far));
    }

    /** Under auto the proxy offers verbs resources only where a peer it serves uses the verbs handler. */
    @Test
    void autoOffersNothingWhereEveryServedPeerIsOfThisHost() {
        System.setProperty(ProxyConfig.HANDLER_PROP_NAME, "auto");
        assertEquals(Optional.empty(), new ProxyTransport().offerAcrossProcesses(null, java.util.List.of(PEER)));
        assertEquals(Optional.empty(), new ProxyTransport().offerAcrossProcesses(null, java.util.List.of()));
    }

    @Test
    void theProxyConnectsProcessesOnTheDirectSignalPath() {
        assertTrue(new ProxyTransport().unavailableAcrossProcesses(null, PEER).isEmpty());
        System.setProperty(ProxyConfig.SIGNAL_PATH_PROP_NAME, "direct");
        assertTrue(new ProxyTransport().unavailableAcrossProcesses(null, PEER).isEmpty());
    }

    @Test
    void thePeerStreamSignalPathIsRefusedSayingWhatToSet() {
        System.setProperty(ProxyConfig.SIGNAL_PATH_PROP_NAME, "peer-stream");
        Optional<String> why = new ProxyTransport().unavailableAcrossProcesses(null, PEER);
        assertTrue(why.isPresent() && why.get().contains("another process")
                && why.get().contains(ProxyConfig.SIGNAL_PATH_ENV), why.toString());
    }

    @Test
    void aHeapBeyondWhatATriggerAddressesIsRefused() {
        RemotePeer huge = new RemotePeer(1, 1L << 40, TriggerFifoDescriptor.FIELD_LIMIT + 1, false, true, "rank 1");
        Optional<String> why = new ProxyTransport().unavailableAcrossProcesses(null, huge);
        assertTrue(why.isPresent() && why.get().contains("larger than a proxy trigger can address"), why.toString());
    }
}

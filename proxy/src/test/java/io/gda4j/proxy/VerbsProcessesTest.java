package io.gda4j.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.bootstrap.ChildJvm;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The verbs handler between two real processes ({@link VerbsProcessChild}, each a JVM with its own emulated NIC over
 * host memory): offers travel on the bootstrap, credit blocks and heaps are memory files each process maps from the
 * other, and the data, signals and atomics one process sends land byte-exact in the other's heap. A killed receiver
 * is named by the sender that runs out of its credits.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class VerbsProcessesTest {
    private final List<ChildJvm> children = new ArrayList<>();

    private List<ChildJvm> world(String mode) throws IOException {
        String token = "verbs-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        int port = freePort();
        return List.of(start(0, port, token, mode), start(1, port, token, mode));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private ChildJvm start(int rank, int port, String token, String mode) throws IOException {
        ChildJvm c = ChildJvm.start(rank, "128m", VerbsProcessChild.class.getName(), List.of(Integer.toString(rank),
                Integer.toString(port), token, mode), Map.of(), List.of("ERROR", "Exception in thread"));
        children.add(c);
        return c;
    }

    @AfterEach
    void killLeftovers() {
        for (ChildJvm c : children) {
            c.process.destroyForcibly();
        }
    }

    @Test
    void putsSignalsAndAtomicsCrossBetweenProcessesByteExact() throws Exception {
        for (ChildJvm c : world("exchange")) {
            String ok = c.await("OK ", 90).text();
            // 8 puts, 100 signals and atomics, one put_signal: 109 messages, each under a credit the peer granted.
            assertTrue(ok.startsWith("OK rank " + c.rank + " posted 109 granted "), ok);
            assertTrue(c.process.waitFor(60, TimeUnit.SECONDS), "rank " + c.rank + " exits after closing");
            assertEquals(0, c.process.exitValue(), c.transcript());
        }
    }

    @Test
    void aSenderWhoseReceiverWasKilledNamesItOnceItsCreditsRunOut() throws Exception {
        List<ChildJvm> all = world("starve");
        all.get(0).await("OK ", 90);
        all.get(1).await("READY ", 90);
        long victim = all.get(1).process.pid();
        all.get(1).process.destroyForcibly(); // SIGKILL: its proxy grants nothing more
        String starved = all.get(0).await("STARVED ", 60).text();
        assertTrue(starved.contains("credits from the receiver, rank 1 (pid " + victim + ")")
                && starved.contains("rank 1 died"), starved);
        long posted = Long.parseLong(starved.split(" ")[1]);
        assertTrue(posted >= 109 && posted <= 109 + 4, "at most a window past the last delivery report: " + posted);
    }
}

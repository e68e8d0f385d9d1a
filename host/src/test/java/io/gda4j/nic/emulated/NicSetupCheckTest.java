package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.nic.Nic;
import io.gda4j.nic.NicCapabilities;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.NicSetupCheck;
import io.gda4j.nic.QpSpec;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.TimeUnit;

/**
 * {@link NicSetupCheck}: a NIC without 8-byte atomics, or one that will not connect a QP to itself, is refused when a
 * rank's NIC is set up, with the reason and what to check, and a NIC that has both passes, its probe's fetch-and-add
 * having added. The emulated NIC on host memory stands in; a refused loopback is a QP whose "loopback" leads to a
 * QP that is gone, which the strict engine fails with TRANSPORT_RETRY_EXC after its retry time, as a ConnectX would.
 */
class NicSetupCheckTest {
    HostMemoryPlatform platform;
    EmulatedNic nic;
    long words;

    @BeforeEach
    void open() {
        platform = new HostMemoryPlatform();
        nic = new EmulatedNic(platform, new EmulatedNicConfig("spin", true)
                .withRetryNanos(TimeUnit.MILLISECONDS.toNanos(1)));
        words = platform.allocate(NicSetupCheck.PROBE_BYTES);
        platform.allowWrites(words, NicSetupCheck.PROBE_BYTES);
    }

    @AfterEach
    void close() {
        nic.close();
    }

    /** {@code nic}, with {@code name}'s call answered by {@code answer} instead. */
    Nic with(String name, java.util.function.Function<Object[], Object> answer) {
        return (Nic) Proxy.newProxyInstance(Nic.class.getClassLoader(), new Class<?>[] {Nic.class},
                (proxy, method, args) -> {
                    if (method.getName().equals(name)) {
                        return answer.apply(args);
                    }
                    return call(method, args);
                });
    }

    private Object call(Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(nic, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Test
    void aNicWithAtomicsAndALoopbackPasses() {
        assertDoesNotThrow(() -> NicSetupCheck.requireAtomics(nic, "rank 0"));
        NicSetupCheck.probeLoopback(nic, words, "rank 0", NicSetupCheck.PROBE_TIMEOUT_NANOS);
        assertEquals(0x5eed + 1, new Pointer(words).getLong(0), "the probe's fetch-and-add added 1");
        assertEquals(0x5eed, new Pointer(words).getLong(8), "and fetched the old value");
        assertTrue(platform.violations.isEmpty(), platform.violations.toString());
    }

    @Test
    void aNicWithoutAtomicsIsRefusedWithTheReason() {
        NicCapabilities c = nic.capabilities();
        Nic noAtomics = with("capabilities", args -> new NicCapabilities(c.maxSqWqebbs(), c.maxCqEntries(),
                c.maxInlineBytes(), false, c.nullMemory(), c.writesMayPassCqe(), c.relaxedOrdering(),
                c.gpuDirectWrites(), c.processLinks()));
        NicException e = assertThrows(NicException.class, () -> NicSetupCheck.requireAtomics(noAtomics, "rank 3"));
        assertTrue(e.getMessage().startsWith("rank 3: "), e.getMessage());
        assertTrue(e.getMessage().contains("no 8-byte RDMA atomics") && e.getMessage().contains("atomic_cap"),
                e.getMessage());
    }

    @Test
    void aLoopbackTheNicWillNotConnectIsRefusedWithWhatToCheck() {
        Nic noLoopback = with("createLoopbackQp", args -> {
            NicQp qp = nic.createQp((QpSpec) args[0]);
            NicQp gone = nic.createQp(QpSpec.of(null, 2, "gone"));
            qp.connect(gone.address());
            gone.close(); // the path "to itself" leads nowhere: requests are retried, then fail
            return qp;
        });
        NicException e = assertThrows(NicException.class, () -> NicSetupCheck.probeLoopback(noLoopback, words,
                "rank 1", NicSetupCheck.PROBE_TIMEOUT_NANOS));
        assertTrue(e.getMessage().startsWith("rank 1: a loopback RC connection on "), e.getMessage());
        assertTrue(e.getMessage().contains("TRANSPORT_RETRY_EXC"), e.getMessage());
        assertTrue(e.getMessage().contains("GDA4J_MLX5_GID_INDEX") && e.getMessage().contains("local-loopback"),
                e.getMessage());
        assertEquals(0x5eed, new Pointer(words).getLong(0), "nothing was added");
    }
}

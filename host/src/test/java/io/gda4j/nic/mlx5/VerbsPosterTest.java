package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.mlx5.GccProgram;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.mlx5.RequiresCompilers;
import io.gda4j.nic.DoorbellKind;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpAddress;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpState;
import io.gda4j.verbs.SendQueue;
import io.gda4j.verbs.VerbsConstants;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * {@link VerbsPoster}, the host poster of a real mlx5 QP, against a recording provider ({@code fake_verbs_provider.c})
 * whose {@code post_send} and {@code poll_cq} sit in the ops of the QP's and CQ's context, where verbs.h's inline
 * {@code ibv_post_send} and {@code ibv_poll_cq} find them: every work request arrives through the provider's function
 * pointer, read field by field by rdma-core's own struct definitions, so the Java side's {@code ibv_send_wr} and
 * {@code ibv_sge} bytes, the chain and the flags are proven against the installed header; completions come back
 * through {@code poll_cq} as {@code ibv_wc}s.
 */
@RequiresCompilers(tools = "gcc", headers = "infiniband/verbs.h")
class VerbsPosterTest {
    static final long TIMEOUT = 2_000_000_000L;

    @TempDir
    static Path buildDir;

    static NativeLibrary provider;
    static long fakeQp;
    static long fakeCq;

    @BeforeAll
    static void buildProvider() throws Exception {
        Path library = GccProgram.compile(GccProgram.source("fake_verbs_provider.c"), buildDir,
                List.of("infiniband/verbs.h"), List.of("-shared", "-fPIC"));
        provider = NativeLibrary.getInstance(library.toString());
        fakeQp = Pointer.nativeValue(call("fake_qp"));
        fakeCq = Pointer.nativeValue(call("fake_cq"));
    }

    static Pointer call(String name, Object... args) {
        return (Pointer) provider.getFunction(name).invoke(Pointer.class, args);
    }

    static void run(String name, Object... args) {
        provider.getFunction(name).invokeVoid(args);
    }

    @BeforeEach
    void reset() {
        run("fake_reset");
    }

    static VerbsPoster poster(int maxInFlight) {
        return new VerbsPoster(new FakeQp(), new SendQueue(fakeQp, fakeCq, 16, 64), maxInFlight, 64);
    }

    /** Each logged request as its fields; "post" lines mark the start of each post_send call. */
    static List<Map<String, String>> logged() {
        List<Map<String, String>> out = new ArrayList<>();
        for (String line : call("fake_log").getString(0).strip().split("\n")) {
            Map<String, String> fields = new LinkedHashMap<>();
            String[] words = line.split(" ");
            fields.put("kind", words[0]);
            for (int i = 1; i < words.length; i++) {
                String[] kv = words[i].split("=", 2);
                fields.put(kv[0], kv[1]);
            }
            out.add(fields);
        }
        return out;
    }

    static int postCalls() {
        return provider.getFunction("fake_post_calls").invokeInt(new Object[0]);
    }

    @Test
    void everyRequestReachesTheProvidersPostSendAsTheHeaderLaysItOut() throws Exception {
        VerbsPoster p = poster(16);
        assertEquals(0, p.postWrite(0x1000, 7, 0x2000, 8, 4096, TIMEOUT));
        assertEquals(1, p.postWriteInline(0x3000, 7, new byte[] {1, 2, 3, 4, 5, 6, 7, (byte) 0xf8}, TIMEOUT));
        assertEquals(2, p.postRead(0x4000, 7, 0x5000, 8, 64, TIMEOUT));
        assertEquals(3, p.postWrite(0x6000, 7, 0x5000, 8, 64, TIMEOUT));
        assertEquals(4, p.postFetchAdd(0x7000, 7, 5, 0x7100, 9, TIMEOUT));
        assertEquals(5, p.postCompareSwap(0x8000, 7, 11, 12, 0x8100, 9, TIMEOUT));
        assertEquals(0, postCalls(), "nothing reaches the NIC before ring()");
        p.ring();
        assertEquals(1, postCalls(), "one ring, one post_send for the whole chain");
        List<Map<String, String>> log = logged();
        assertEquals("post", log.get(0).get("kind"));
        assertEquals(Integer.toString(0x4242), log.get(0).get("qp"), "posted on the QP whose context holds the op");
        assertEquals(7, log.size(), log.toString());
        int signaled = VerbsConstants.IBV_SEND_SIGNALED;
        int fence = VerbsConstants.IBV_SEND_FENCE;
        expect(log.get(1), 0, VerbsConstants.IBV_WR_RDMA_WRITE, signaled, "sge_length", "4096", "sge_lkey", "8",
                "sge_addr", "8192", "remote_addr", "4096", "rkey", "7");
        expect(log.get(2), 1, VerbsConstants.IBV_WR_RDMA_WRITE, signaled | VerbsConstants.IBV_SEND_INLINE,
                "sge_length", "8", "inline", "01020304050607f8", "remote_addr", "12288", "rkey", "7");
        expect(log.get(3), 2, VerbsConstants.IBV_WR_RDMA_READ, signaled, "sge_length", "64", "sge_lkey", "8",
                "sge_addr", "20480", "remote_addr", "16384", "rkey", "7");
        // Behind the READ, not yet completed: fenced, so the WRITE cannot send its source before the READ filled it.
        expect(log.get(4), 3, VerbsConstants.IBV_WR_RDMA_WRITE, signaled | fence, "sge_addr", "20480");
        expect(log.get(5), 4, VerbsConstants.IBV_WR_ATOMIC_FETCH_AND_ADD, signaled | fence, "sge_length", "8",
                "sge_lkey", "9", "sge_addr", "28928", "remote_addr", "28672", "compare_add", "5", "swap", "0",
                "rkey", "7");
        expect(log.get(6), 5, VerbsConstants.IBV_WR_ATOMIC_CMP_AND_SWP, signaled | fence, "compare_add", "11",
                "swap", "12", "remote_addr", "32768", "rkey", "7");
        p.quiet(TIMEOUT);
        assertEquals(6, p.retiredIndex(), "every request completed through poll_cq");
        p.postWrite(0x1000, 7, 0x2000, 8, 8, TIMEOUT);
        p.ring();
        expect(logged().get(8), 6, VerbsConstants.IBV_WR_RDMA_WRITE, signaled); // the READ and atomics are done
        assertEquals(2, postCalls());
    }

    static void expect(Map<String, String> wr, long id, int opcode, int flags, String... fields) {
        assertEquals("wr", wr.get("kind"), wr.toString());
        assertEquals(Long.toString(id), wr.get("id"), () -> "wr_id of " + wr);
        assertEquals(Integer.toString(opcode), wr.get("opcode"), () -> "opcode of " + wr);
        assertEquals(Integer.toString(flags), wr.get("flags"), () -> "send_flags of " + wr);
        assertEquals("1", wr.get("num_sge"), () -> "num_sge of " + wr);
        for (int i = 0; i < fields.length; i += 2) {
            String name = fields[i];
            assertEquals(fields[i + 1], wr.get(name), () -> name + " of " + wr);
        }
    }

    @Test
    void aFailedCompletionIsWordedAsMlx5sErrorCqe() throws Exception {
        VerbsPoster p = poster(16);
        p.postWrite(0x1000, 7, 0x2000, 8, 64, TIMEOUT);
        p.postWrite(0x1000, 99, 0x2000, 8, 64, TIMEOUT);
        p.postWrite(0x1000, 7, 0x2000, 8, 64, TIMEOUT);
        run("fake_fail", 1L, VerbsConstants.IBV_WC_REM_ACCESS_ERR, 0x88);
        CompletionErrorException e = assertThrows(CompletionErrorException.class, () -> p.quiet(TIMEOUT));
        assertEquals(CqeSyndrome.REMOTE_ACCESS, e.syndrome(), e.getMessage());
        assertEquals(1, e.wqeIndex());
        assertEquals(Mlx5Opcode.RDMA_WRITE, e.wqeOpcode());
        assertEquals(0x4242, e.qpn());
        assertEquals(0x88, e.cqe().vendorSyndrome());
        assertTrue(e.getMessage().contains("REMOTE_ACCESS (0x13)"), e.getMessage());
        assertEquals(3, p.retiredIndex(), "the flushed request after it was consumed too");
    }

    @Test
    void aFullSendQueueWaitsForCompletionsInsteadOfOverrunningTheProvider() throws Exception {
        VerbsPoster p = poster(4);
        run("fake_hold", 1);
        for (int i = 0; i < 4; i++) {
            p.postWrite(0x1000, 7, 0x2000, 8, 8, TIMEOUT);
        }
        TimeoutException full = assertThrows(TimeoutException.class,
                () -> p.postWrite(0x1000, 7, 0x2000, 8, 8, 20_000_000L));
        assertTrue(full.getMessage().contains("a free send queue slot"), full.getMessage());
        assertEquals(5, logged().size(), "the four reached post_send, the fifth did not: " + logged());
        run("fake_hold", 0);
        assertEquals(4, p.postWrite(0x1000, 7, 0x2000, 8, 8, TIMEOUT));
        p.quiet(TIMEOUT);
        assertEquals(5, p.retiredIndex());
    }

    @Test
    void anInlinePayloadAboveTheQpsLimitIsRefusedBeforeAnythingIsPosted() {
        VerbsPoster p = poster(16);
        assertThrows(IllegalArgumentException.class, () -> p.postWriteInline(0x1000, 7, new byte[65], TIMEOUT));
        assertEquals(0, p.producerIndex());
    }

    @Test
    void everyStatusMapsBackToTheSyndromeMlx5HandleErrorCqeMapsFrom() {
        // rdma-core providers/mlx5/cq.c, mlx5_handle_error_cqe: syndrome -> status, one to one.
        Map<CqeSyndrome, Integer> providerTable = Map.ofEntries(
                Map.entry(CqeSyndrome.LOCAL_LENGTH, VerbsConstants.IBV_WC_LOC_LEN_ERR),
                Map.entry(CqeSyndrome.LOCAL_QP_OP, VerbsConstants.IBV_WC_LOC_QP_OP_ERR),
                Map.entry(CqeSyndrome.LOCAL_PROT, VerbsConstants.IBV_WC_LOC_PROT_ERR),
                Map.entry(CqeSyndrome.WR_FLUSH, VerbsConstants.IBV_WC_WR_FLUSH_ERR),
                Map.entry(CqeSyndrome.MW_BIND, VerbsConstants.IBV_WC_MW_BIND_ERR),
                Map.entry(CqeSyndrome.BAD_RESP, VerbsConstants.IBV_WC_BAD_RESP_ERR),
                Map.entry(CqeSyndrome.LOCAL_ACCESS, VerbsConstants.IBV_WC_LOC_ACCESS_ERR),
                Map.entry(CqeSyndrome.REMOTE_INVAL_REQ, VerbsConstants.IBV_WC_REM_INV_REQ_ERR),
                Map.entry(CqeSyndrome.REMOTE_ACCESS, VerbsConstants.IBV_WC_REM_ACCESS_ERR),
                Map.entry(CqeSyndrome.REMOTE_OP, VerbsConstants.IBV_WC_REM_OP_ERR),
                Map.entry(CqeSyndrome.TRANSPORT_RETRY_EXC, VerbsConstants.IBV_WC_RETRY_EXC_ERR),
                Map.entry(CqeSyndrome.RNR_RETRY_EXC, VerbsConstants.IBV_WC_RNR_RETRY_EXC_ERR),
                Map.entry(CqeSyndrome.REMOTE_ABORTED, VerbsConstants.IBV_WC_REM_ABORT_ERR));
        assertEquals(CqeSyndrome.values().length, providerTable.size(), "every syndrome gda4j names has a status");
        providerTable.forEach((syndrome, status) -> assertEquals(syndrome.code(), SendQueue.mlx5Syndrome(status),
                syndrome::name));
        assertEquals(0, SendQueue.mlx5Syndrome(VerbsConstants.IBV_WC_GENERAL_ERR));
    }

    /** The QP the poster names in its messages: open, connected. */
    static final class FakeQp implements NicQp {
        @Override
        public int qpn() {
            return 0x4242;
        }

        @Override
        public String label() {
            return "fake provider QP";
        }

        @Override
        public Nic nic() {
            return (Nic) Proxy.newProxyInstance(Nic.class.getClassLoader(), new Class<?>[] {Nic.class},
                    (proxy, method, args) -> {
                        if (method.getName().equals("name")) {
                            return Nic.MLX5;
                        }
                        throw new UnsupportedOperationException(method.getName());
                    });
        }

        @Override
        public QpAddress address() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void connect(QpAddress peer) {
            throw new UnsupportedOperationException();
        }

        @Override
        public QpState state() {
            return QpState.RTS;
        }

        @Override
        public QpRings deviceRings() {
            throw new UnsupportedOperationException();
        }

        @Override
        public QpRings hostRings() {
            return new QpRings(0x4242, 64, 16, 8, 16, DoorbellKind.MMIO, 128, 16, 24, 64);
        }

        @Override
        public void close() {
        }
    }
}

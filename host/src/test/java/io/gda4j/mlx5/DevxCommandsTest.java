package io.gda4j.mlx5;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.gda4j.mlx5.DevxCommands.PrmField;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The DEVX commands of GPU-resident rings against {@code devx-golden.txt}: every {@link PrmField}'s bit offset and
 * width, each command's size, and whole commands for ten parameter sets, as rdma-core's {@code DEVX_SET} /
 * {@code DEVX_SET64} / {@code DEVX_ADDR_OF} computed them over the PRM layouts ({@code src/test/c/devx/
 * devx_golden_gen.c} says how the file was made: the layouts are not installed headers, so the vectors are committed).
 */
class DevxCommandsTest {
    static final Map<String, long[]> FIELDS = new HashMap<>();
    static final Map<String, Long> SIZES = new HashMap<>();
    static final Map<String, byte[]> CASES = new HashMap<>();

    static {
        try (InputStream in = DevxCommandsTest.class.getResourceAsStream("devx-golden.txt")) {
            assertNotNull(in, "devx-golden.txt is not on the test class path");
            for (String line : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
                String[] w = line.strip().split(" ");
                switch (w[0]) {
                    case "field" -> FIELDS.put(w[1], new long[] {Long.parseLong(w[2]), Long.parseLong(w[3])});
                    case "size" -> SIZES.put(w[1], Long.parseLong(w[2]));
                    case "case" -> CASES.put(w[1], HexFormat.of().parseHex(w[2]));
                    default -> throw new IllegalStateException("unknown line in devx-golden.txt: " + line);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void everyFieldLiesWhereThePrmLayoutPutsIt() {
        Set<String> java = new TreeSet<>();
        for (PrmField f : PrmField.values()) {
            java.add(f.cName());
            long[] golden = FIELDS.get(f.cName());
            assertNotNull(golden, f + " is not in devx-golden.txt");
            assertEquals(golden[0], f.bit(), f + ": bit offset");
            assertEquals(golden[1], f.width(), f + ": width");
        }
        assertEquals(new TreeSet<>(FIELDS.keySet()), java, "each side names the fields the other does");
        for (String command : new String[] {"create_cq_in", "create_qp_in", "rst2init_qp_in", "init2rtr_qp_in",
                "rtr2rts_qp_in"}) {
            assertEquals(DevxCommands.CMD_BYTES, SIZES.get(command), command + " bytes");
        }
        assertEquals(DevxCommands.OUT_BYTES, SIZES.get("create_cq_out"));
        assertEquals(DevxCommands.OUT_BYTES, SIZES.get("create_qp_out"));
    }

    static void same(String name, byte[] java) {
        byte[] golden = CASES.get(name);
        assertNotNull(golden, name + " is not in devx-golden.txt");
        assertEquals(HexFormat.of().formatHex(golden), HexFormat.of().formatHex(java), name);
    }

    @Test
    void createCqIsByteForByteWhatDevxSetWrites() {
        same("create_cq.small", DevxCommands.createCq(new DevxCommands.CqParams(0x11, 0, 0x22, 0x40, 10, 0x33, 7, 4)));
        same("create_cq.large", DevxCommands.createCq(new DevxCommands.CqParams(0xabcdef, 0x10000, 0x123456, 0x1000,
                15, 0xfffff, 0xff, 4)));
    }

    @Test
    void createQpIsByteForByteWhatDevxSetWrites() {
        same("create_qp.small", DevxCommands.createQp(new DevxCommands.QpParams(0x1234, 0x33, 0x55, 10, 0x66, 0x77, 8,
                0, 4)));
        same("create_qp.large", DevxCommands.createQp(new DevxCommands.QpParams(0xfedcba, 0xfffff, 0xabcdef, 15,
                0x13579b, 0x2468ac, 0x1008, 0x654321, 4)));
    }

    @Test
    void theThreeTransitionsAreByteForByteWhatDevxSetWrites() {
        same("rst2init.port1", DevxCommands.rst2init(0x000123, 1));
        same("rst2init.port2", DevxCommands.rst2init(0xfedcba, 2));
        same("init2rtr.ib", DevxCommands.init2rtr(0x000123, 5, 0x000456, 0x789abc, 4,
                new DevxCommands.RtrPath(0x0017, null, 0, 0, 3, 0, null)));
        byte[] gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 10, 0, 0, 7};
        byte[] rmac = {0x0c, 0x42, (byte) 0xa1, 0x12, 0x34, 0x56};
        same("init2rtr.roce", DevxCommands.init2rtr(0xfedcba, 3, 0xabcdef, 0x123456, 4,
                new DevxCommands.RtrPath(0, gid, 3, 0xc001, 0, 106, rmac)));
        same("rtr2rts.default", DevxCommands.rtr2rts(0x000123, 0x789abc, 4, 7, 7, 20));
        same("rtr2rts.other", DevxCommands.rtr2rts(0xfedcba, 0x123456, 0, 3, 0, 14));
    }

    @Test
    void outputsNameTheObjectAndTheFailure() {
        byte[] out = new byte[DevxCommands.OUT_BYTES];
        DevxCommands.set(out, 0, PrmField.CREATE_QP_OUT_QPN, 0xabcdef);
        DevxCommands.set(out, 0, PrmField.CREATE_QP_OUT_STATUS, 0x05);
        DevxCommands.set(out, 0, PrmField.CREATE_QP_OUT_SYNDROME, 0x12345678);
        assertEquals(0xabcdef, DevxCommands.qpnOf(out));
        assertEquals("status 0x05, syndrome 0x12345678", DevxCommands.statusOf(out));
        byte[] cq = new byte[DevxCommands.OUT_BYTES];
        DevxCommands.set(cq, 0, PrmField.CREATE_CQ_OUT_CQN, 0x000abc);
        assertEquals(0xabc, DevxCommands.cqnOf(cq));
        assertArrayEquals(new byte[] {0, 0, 0x0a, (byte) 0xbc}, java.util.Arrays.copyOfRange(cq, 8, 12));
    }
}

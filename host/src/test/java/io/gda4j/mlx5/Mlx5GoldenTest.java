package io.gda4j.mlx5;

import static java.util.Map.entry;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java mlx5 encoders against rdma-core: {@code mlx5_golden.c} is compiled with every Java layout constant as a
 * {@code -D} macro and {@code _Static_assert}s them against {@code <infiniband/mlx5dv.h>}, then writes each case of
 * {@code golden-cases.txt} with {@code mlx5dv_set_ctrl_seg}, {@code mlx5dv_set_data_seg} and the segment structs.
 * The Java bytes must match byte for byte, and decode back to the case's fields.
 */
@RequiresCompilers(tools = "gcc", headers = "infiniband/mlx5dv.h")
class Mlx5GoldenTest {
    /** Classes whose {@code public static final int} fields are handed to the C program (and mirrored in CUDA). */
    static final List<Class<?>> CONSTANT_CLASSES = List.of(WqeDescriptor.class, Mlx5Opcode.class,
            CqeDescriptor.class, CqeOpcode.class, DoorbellRecordDescriptor.class, DoorbellDescriptor.class);

    /** Java constants that mlx5dv.h does not state, with where they come from and what checks them instead. */
    private static final Map<String, String> NOT_IN_MLX5DV_H = Map.ofEntries(
            entry("WqeDescriptor_SEGMENT_SIZE", "the ds unit; every golden WQE's ds and length check it"),
            entry("WqeDescriptor_SEGMENTS_PER_WQEBB", "derived: WQEBB_SIZE / SEGMENT_SIZE"),
            entry("WqeDescriptor_DS_MASK", "kernel MLX5_WQE_CTRL_DS_MASK (include/linux/mlx5/qp.h)"),
            entry("WqeDescriptor_MAX_DS", "derived from DS_MASK; the inline_max case reaches it"),
            entry("WqeDescriptor_MAX_WQEBBS", "derived from MAX_DS"),
            entry("WqeDescriptor_OPMOD_SHIFT", "mlx5dv_set_ctrl_seg's packing; golden bytes check it"),
            entry("WqeDescriptor_WQE_INDEX_SHIFT", "mlx5dv_set_ctrl_seg's packing; golden bytes check it"),
            entry("WqeDescriptor_WQE_INDEX_MASK", "mlx5dv_set_ctrl_seg takes a uint16_t pi; wrap cases check it"),
            entry("WqeDescriptor_OPCODE_MASK", "mlx5dv_set_ctrl_seg's packing; golden bytes check it"),
            entry("WqeDescriptor_QPN_SHIFT", "mlx5dv_set_ctrl_seg's packing; golden bytes check it"),
            entry("WqeDescriptor_QPN_MASK", "24-bit QP numbers; golden bytes check it"),
            entry("WqeDescriptor_INLINE_BYTE_COUNT_MASK", "complement of MLX5_INLINE_SEG"),
            entry("WqeDescriptor_ATOMIC_OPERAND_BYTES", "8-byte atomics (IB spec); golden atomic cases check it"),
            entry("WqeDescriptor_CTRL_SEGMENT", "gda4j's WQE shapes, as the mlx5 provider orders segments"),
            entry("WqeDescriptor_RADDR_SEGMENT", "gda4j's WQE shapes; golden bytes check them"),
            entry("WqeDescriptor_RDMA_DATA_SEGMENT", "gda4j's WQE shapes; golden bytes check them"),
            entry("WqeDescriptor_INLINE_SEGMENT", "gda4j's WQE shapes; golden bytes check them"),
            entry("WqeDescriptor_ATOMIC_SEGMENT", "gda4j's WQE shapes; golden bytes check them"),
            entry("WqeDescriptor_ATOMIC_DATA_SEGMENT", "gda4j's WQE shapes; golden bytes check them"),
            entry("WqeDescriptor_NOP_DS", "gda4j's WQE shapes; golden ds values check them"),
            entry("WqeDescriptor_RDMA_DS", "gda4j's WQE shapes; golden ds values check them"),
            entry("WqeDescriptor_ATOMIC_DS", "gda4j's WQE shapes; golden ds values check them"),
            entry("WqeDescriptor_MAX_INLINE_BYTES", "derived from MAX_DS; the inline_max case reaches it"),
            entry("Mlx5Opcode_OPMOD_MASKED_ATOMIC_4_BYTES", "PRM: 0x08 | (log2(4) - 2), as UCX writes it"),
            entry("Mlx5Opcode_OPMOD_MASKED_ATOMIC_8_BYTES", "PRM: 0x08 | (log2(8) - 2), as UCX writes it"),
            entry("CqeDescriptor_CQE_SHIFT", "derived: log2(CQE_SIZE)"),
            entry("CqeDescriptor_QPN_MASK", "24-bit QP numbers; golden CQEs check it"),
            entry("CqeDescriptor_S_WQE_OPCODE_SHIFT", "top byte of s_wqe_opcode_qpn; golden CQEs check it"),
            entry("CqeDescriptor_OPCODE_SHIFT", "mlx5dv_get_cqe_opcode; golden CQEs check it"),
            entry("DoorbellRecordDescriptor_SIZE", "two __be32 words (RCV_DBR, SND_DBR); golden dbr cases"),
            entry("DoorbellRecordDescriptor_RECEIVE_COUNTER_OFFSET", "derived: RCV_DBR * 4"),
            entry("DoorbellRecordDescriptor_SEND_COUNTER_OFFSET", "derived: SND_DBR * 4"),
            entry("DoorbellRecordDescriptor_COUNTER_MASK", "the provider's cur_post & 0xffff; golden dbr cases"),
            entry("DoorbellDescriptor_SIZE", "a 64-bit MMIO write; golden doorbell cases check the bytes"),
            entry("DoorbellDescriptor_PRODUCER_INDEX_OFFSET", "first ctrl word; golden doorbell cases"),
            entry("DoorbellDescriptor_QPN_OFFSET", "second ctrl word; golden doorbell cases"));

    private static final int RING_WQEBBS = 16;
    private static final byte GARBAGE = (byte) 0xa5;

    @TempDir
    static Path buildDir;

    private static Set<String> checkedByC;
    private static Map<String, String> cOutput;

    @BeforeAll
    static void compileAndRun() throws Exception {
        List<String> defines = new ArrayList<>();
        javaConstants().forEach((name, value) -> defines.add("-DJ_" + name + "=" + Long.toUnsignedString(value)
                + "ULL"));
        Path program = GccProgram.compile(GccProgram.source("mlx5_golden.c"), buildDir,
                List.of("infiniband/mlx5dv.h"), defines);
        checkedByC = new TreeSet<>(Arrays.asList(GccProgram.run(program, null, "checked").strip().split("\n")));
        cOutput = new HashMap<>();
        for (String line : GccProgram.run(program, GoldenCases.text(), "cases").split("\n")) {
            int space = line.indexOf(' ');
            cOutput.put(line.substring(0, space), line.substring(space + 1));
        }
    }

    /** Every public int constant of the layout classes, and every syndrome code, as {@code Class_FIELD}. */
    private static Map<String, Long> javaConstants() throws IllegalAccessException {
        Map<String, Long> constants = new TreeMap<>();
        for (Class<?> type : CONSTANT_CLASSES) {
            for (Field field : type.getDeclaredFields()) {
                int modifiers = field.getModifiers();
                if (Modifier.isPublic(modifiers) && Modifier.isStatic(modifiers) && Modifier.isFinal(modifiers)
                        && field.getType() == int.class) {
                    constants.put(type.getSimpleName() + "_" + field.getName(),
                            Integer.toUnsignedLong(field.getInt(null)));
                }
            }
        }
        for (CqeSyndrome syndrome : CqeSyndrome.values()) {
            constants.put("CqeSyndrome_" + syndrome.name(), (long) syndrome.code());
        }
        return constants;
    }

    @Test
    void everyJavaConstantIsCheckedAgainstTheHeaderOrExplained() throws IllegalAccessException {
        Set<String> java = javaConstants().keySet();
        Set<String> unexplained = new TreeSet<>(java);
        unexplained.removeAll(checkedByC);
        unexplained.removeAll(NOT_IN_MLX5DV_H.keySet());
        assertEquals(Set.of(), unexplained, "Java constants neither checked by mlx5_golden.c nor listed in"
                + " NOT_IN_MLX5DV_H");

        Set<String> both = new TreeSet<>(checkedByC);
        both.retainAll(NOT_IN_MLX5DV_H.keySet());
        assertEquals(Set.of(), both, "constants checked by the header yet listed as not in it");

        Set<String> stale = new TreeSet<>(NOT_IN_MLX5DV_H.keySet());
        stale.removeAll(java);
        assertEquals(Set.of(), stale, "NOT_IN_MLX5DV_H names constants that no longer exist");
    }

    @TestFactory
    Stream<DynamicTest> javaBytesMatchRdmaCore() {
        return GoldenCases.load().stream().map(c -> DynamicTest.dynamicTest(c.kind() + " " + c.name(), () -> {
            String fromC = cOutput.get(c.name());
            assertNotNull(fromC, () -> "mlx5_golden.c printed nothing for " + c.name());
            String[] parts = fromC.split(" ");
            Encoded java = encode(c);
            assertEquals(parts[0], HexFormat.of().formatHex(java.bytes), () -> c.name() + ": Java bytes differ from"
                    + " rdma-core's");
            Map<String, String> extras = extras(parts);
            if (extras.containsKey("ds")) {
                int ds = Integer.parseInt(extras.get("ds"));
                assertEquals(WqeDescriptor.wqebbsForDs(ds), java.wqebbs, "WQEBBs returned by the encoder");
            }
            if (extras.containsKey("opcode")) {
                DecodedCqe cqe = CqeDecoder.decode(java.ring, c.number("cqe_index"));
                assertEquals(Integer.parseInt(extras.get("opcode")), cqe.cqeOpcode(), "mlx5dv_get_cqe_opcode");
                assertEquals(Integer.parseInt(extras.get("owner")), cqe.owner(), "mlx5dv_get_cqe_owner");
            }
        }));
    }

    @TestFactory
    Stream<DynamicTest> rdmaCoreBytesDecodeToTheCase() {
        return GoldenCases.load().stream().filter(c -> !c.kind().equals("dbr") && !c.kind().equals("doorbell"))
                .map(c -> DynamicTest.dynamicTest(c.kind() + " " + c.name(), () -> {
                    byte[] fromC = HexFormat.of().parseHex(cOutput.get(c.name()).split(" ")[0]);
                    if (c.kind().endsWith("cqe")) {
                        checkCqe(c, fromC);
                    } else {
                        checkWqe(c, fromC);
                    }
                }));
    }

    private static void checkWqe(GoldenCases.Case c, byte[] fromC) {
        ByteBuffer ring = garbageRing(RING_WQEBBS * WqeDescriptor.WQEBB_SIZE);
        long index = c.number("wqe_index");
        for (int i = 0; i < fromC.length; i++) {
            ring.put(WqeDescriptor.byteOffset(index, i, RING_WQEBBS), fromC[i]);
        }
        DecodedWqe wqe = WqeDecoder.decode(ring, index, c.intValue("qpn"));
        assertEquals(WqeFault.NONE, wqe.fault(), wqe::toString);
        assertEquals((int) (index & 0xffff), wqe.wqeIndex());
        assertEquals(c.intValue("fm_ce_se"), wqe.fmCeSe());
        assertEquals(fromC.length / WqeDescriptor.SEGMENT_SIZE, wqe.ds());
        switch (c.kind()) {
            case "nop" -> assertEquals(Mlx5Opcode.NOP, wqe.opcode());
            case "write", "write_imm", "read" -> {
                assertEquals(switch (c.kind()) {
                    case "write" -> Mlx5Opcode.RDMA_WRITE;
                    case "write_imm" -> Mlx5Opcode.RDMA_WRITE_IMM;
                    default -> Mlx5Opcode.RDMA_READ;
                }, wqe.opcode());
                assertEquals(c.number("raddr"), wqe.raddr());
                assertEquals(c.intValue("rkey"), wqe.rkey());
                assertEquals(c.number("addr"), wqe.addr());
                assertEquals(c.intValue("lkey"), wqe.lkey());
                assertEquals(c.intValue("byte_count"), wqe.byteCount());
                assertEquals(c.kind().equals("write_imm") ? c.intValue("imm") : 0, wqe.imm());
            }
            case "write_inline" -> {
                assertEquals(Mlx5Opcode.RDMA_WRITE, wqe.opcode());
                assertEquals(c.number("raddr"), wqe.raddr());
                assertEquals(c.intValue("rkey"), wqe.rkey());
                assertArrayEquals(c.payload(), wqe.inlinePayload());
                assertEquals(c.payload().length, wqe.byteCount());
            }
            case "fetch_add", "compare_swap" -> {
                assertEquals(c.kind().equals("fetch_add") ? Mlx5Opcode.ATOMIC_FA : Mlx5Opcode.ATOMIC_CS,
                        wqe.opcode());
                assertEquals(c.number("raddr"), wqe.raddr());
                assertEquals(c.intValue("rkey"), wqe.rkey());
                assertEquals(c.number("swap_add"), wqe.swapAdd());
                assertEquals(c.kind().equals("compare_swap") ? c.number("compare") : 0L, wqe.compare());
                assertEquals(c.number("addr"), wqe.addr());
                assertEquals(c.intValue("lkey"), wqe.lkey());
                assertEquals(WqeDescriptor.ATOMIC_OPERAND_BYTES, wqe.byteCount());
            }
            default -> throw new IllegalStateException("unknown golden kind " + c.kind());
        }
    }

    private static void checkCqe(GoldenCases.Case c, byte[] fromC) {
        int count = c.intValue("cqe_count");
        long index = c.number("cqe_index");
        ByteBuffer ring = garbageRing(count * CqeDescriptor.CQE_SIZE);
        ring.put(CqeDescriptor.cqeOffset(index, count), fromC);
        boolean error = c.kind().equals("err_cqe");
        int opcode = error ? c.intValue("opcode") : CqeOpcode.REQ;
        assertEquals(opcode, CqeDecoder.poll(ring, index), "poll sees the fresh CQE");
        assertEquals(CqeDecoder.EMPTY, CqeDecoder.poll(ring, index + count), "a CQE of the previous pass is empty");
        DecodedCqe cqe = CqeDecoder.decode(ring, index);
        assertEquals(c.intValue("qpn"), cqe.qpn());
        assertEquals(c.intValue("wqe_counter"), cqe.wqeCounter());
        assertEquals(c.intValue("s_wqe_opcode"), cqe.wqeOpcode());
        if (error) {
            assertEquals(c.intValue("syndrome"), cqe.syndrome());
            assertEquals(c.intValue("vendor_err_synd"), cqe.vendorSyndrome());
            assertTrue(cqe.isError());
        } else {
            assertEquals(c.intValue("byte_cnt"), cqe.byteCount());
        }
    }

    /** A case as the Java side writes it: the meaningful bytes, the WQEBBs used, and the buffer they sit in. */
    record Encoded(byte[] bytes, int wqebbs, ByteBuffer ring) {
    }

    /** Encodes one case with the Java encoders into a ring pre-filled with garbage, and reads its bytes back. */
    static Encoded encode(GoldenCases.Case c) {
        switch (c.kind()) {
            case "dbr" -> {
                ByteBuffer dbr = garbageRing(DoorbellRecordDescriptor.SIZE);
                dbr.putInt(DoorbellRecordDescriptor.RECEIVE_COUNTER_OFFSET, 0);
                DoorbellRecordDescriptor.putSendCounterRelease(dbr, 0, c.number("pi"));
                return new Encoded(bytes(dbr, 0, DoorbellRecordDescriptor.SIZE), 0, dbr);
            }
            case "doorbell" -> {
                ByteBuffer register = garbageRing(DoorbellDescriptor.SIZE);
                DoorbellDescriptor.putDoorbellRelease(register, 0, c.number("pi"), c.intValue("qpn"));
                return new Encoded(bytes(register, 0, DoorbellDescriptor.SIZE), 0, register);
            }
            case "cqe", "err_cqe" -> {
                int count = c.intValue("cqe_count");
                long index = c.number("cqe_index");
                ByteBuffer cq = garbageRing(count * CqeDescriptor.CQE_SIZE);
                if (c.kind().equals("cqe")) {
                    CqeEncoder.writeRequester(cq, index, c.intValue("qpn"), c.intValue("wqe_counter"),
                            c.intValue("s_wqe_opcode"), c.intValue("byte_cnt"));
                } else {
                    CqeEncoder.writeError(cq, index, c.intValue("opcode"), c.intValue("qpn"),
                            c.intValue("wqe_counter"), c.intValue("s_wqe_opcode"), c.intValue("syndrome"),
                            c.intValue("vendor_err_synd"));
                }
                return new Encoded(bytes(cq, CqeDescriptor.cqeOffset(index, count), CqeDescriptor.CQE_SIZE), 0, cq);
            }
            default -> {
                return encodeWqe(c);
            }
        }
    }

    private static Encoded encodeWqe(GoldenCases.Case c) {
        ByteBuffer sq = garbageRing(RING_WQEBBS * WqeDescriptor.WQEBB_SIZE);
        long index = c.number("wqe_index");
        int qpn = c.intValue("qpn");
        int fm = c.intValue("fm_ce_se");
        int wqebbs = switch (c.kind()) {
            case "nop" -> WqeEncoder.writeNop(sq, index, qpn, fm);
            case "write" -> WqeEncoder.writeRdmaWrite(sq, index, qpn, fm, c.number("raddr"), c.intValue("rkey"),
                    c.number("addr"), c.intValue("lkey"), c.intValue("byte_count"));
            case "write_imm" -> WqeEncoder.writeRdmaWriteImm(sq, index, qpn, fm, c.intValue("imm"), c.number("raddr"),
                    c.intValue("rkey"), c.number("addr"), c.intValue("lkey"), c.intValue("byte_count"));
            case "read" -> WqeEncoder.writeRdmaRead(sq, index, qpn, fm, c.number("raddr"), c.intValue("rkey"),
                    c.number("addr"), c.intValue("lkey"), c.intValue("byte_count"));
            case "write_inline" -> {
                byte[] payload = c.payload();
                yield WqeEncoder.writeRdmaWriteInline(sq, index, qpn, fm, c.number("raddr"), c.intValue("rkey"),
                        payload, 0, payload.length);
            }
            case "fetch_add" -> WqeEncoder.writeAtomicFetchAdd(sq, index, qpn, fm, c.number("raddr"),
                    c.intValue("rkey"), c.number("swap_add"), c.number("addr"), c.intValue("lkey"));
            case "compare_swap" -> WqeEncoder.writeAtomicCompareSwap(sq, index, qpn, fm, c.number("raddr"),
                    c.intValue("rkey"), c.number("compare"), c.number("swap_add"), c.number("addr"),
                    c.intValue("lkey"));
            default -> throw new IllegalStateException("unknown golden kind " + c.kind());
        };
        // The WQE's meaningful bytes are ds * 16, read in ring order (the WQE may wrap to slot 0).
        int ds = BigEndian.getInt(sq, WqeDescriptor.segmentOffset(index, 0, RING_WQEBBS)
                + WqeDescriptor.CTRL_QPN_DS_OFFSET) & WqeDescriptor.DS_MASK;
        byte[] bytes = new byte[ds * WqeDescriptor.SEGMENT_SIZE];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = sq.get(WqeDescriptor.byteOffset(index, i, RING_WQEBBS));
        }
        return new Encoded(bytes, wqebbs, sq);
    }

    private static Map<String, String> extras(String[] parts) {
        Map<String, String> extras = new HashMap<>();
        for (int i = 1; i < parts.length; i++) {
            String[] kv = parts[i].split("=", 2);
            extras.put(kv[0], kv[1]);
        }
        return extras;
    }

    private static ByteBuffer garbageRing(int size) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(size);
        for (int i = 0; i < size; i++) {
            buffer.put(i, GARBAGE);
        }
        return buffer;
    }

    private static byte[] bytes(ByteBuffer buffer, int offset, int length) {
        byte[] bytes = new byte[length];
        buffer.get(offset, bytes);
        return bytes;
    }
}

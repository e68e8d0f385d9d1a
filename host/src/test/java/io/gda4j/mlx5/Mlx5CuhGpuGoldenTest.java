package io.gda4j.mlx5;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.PtxModule;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The GPU's encoder (gda4j/layout/mlx5.cuh, run by {@code gda4j_ibgda_encode_cases} in kernels/ibgda.cu) against the
 * golden table: every WQE, doorbell record and doorbell the device writes equals, byte for byte, what the Java encoder
 * writes (which {@link Mlx5GoldenTest} checks against rdma-core); every CQE the Java side writes is parsed by the
 * device into the fields the table names.
 */
@Tag("gpu")
class Mlx5CuhGpuGoldenTest {
    static final int CASE_BYTES = 1120;
    static final int OUT_BYTES = 1024;
    static final int RING_WQEBBS = 16;

    static int kind(String k) {
        return switch (k) {
            case "nop" -> 0;
            case "write" -> 1;
            case "write_imm" -> 2;
            case "read" -> 3;
            case "write_inline" -> 4;
            case "fetch_add" -> 5;
            case "compare_swap" -> 6;
            case "dbr" -> 7;
            case "doorbell" -> 8;
            default -> 9;
        };
    }

    static long opt(GoldenCases.Case c, String key) {
        return c.fields().containsKey(key) ? c.number(key) : 0;
    }

    /** The kernel's GoldenCase struct (kernels/ibgda.cu), little-endian. */
    static void pack(ByteBuffer b, int at, GoldenCases.Case c) {
        b.putInt(at, kind(c.kind()));
        b.putInt(at + 4, (int) opt(c, "qpn"));
        b.putLong(at + 8, opt(c, "wqe_index"));
        b.putInt(at + 16, (int) opt(c, "fm_ce_se"));
        b.putInt(at + 20, (int) opt(c, "imm"));
        b.putLong(at + 24, opt(c, "raddr"));
        b.putInt(at + 32, (int) opt(c, "rkey"));
        b.putInt(at + 36, (int) opt(c, "lkey"));
        b.putLong(at + 40, opt(c, "addr"));
        b.putInt(at + 48, (int) opt(c, "byte_count"));
        b.putLong(at + 56, opt(c, "swap_add"));
        b.putLong(at + 64, opt(c, "compare"));
        b.putLong(at + 72, opt(c, "pi"));
        b.putLong(at + 80, opt(c, "cqe_index"));
        b.putInt(at + 88, (int) opt(c, "cqe_count"));
        byte[] payload;
        if (c.kind().equals("write_inline")) {
            payload = c.payload();
        } else if (c.kind().equals("cqe") || c.kind().equals("err_cqe")) {
            payload = Mlx5GoldenTest.encode(c).bytes(); // the 64 CQE bytes the Java encoder wrote
        } else {
            payload = new byte[0];
        }
        b.putInt(at + 52, payload.length);
        b.put(at + 96, payload);
    }

    @Test
    void deviceEncoderWritesTheGoldenBytes() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        List<GoldenCases.Case> cases = GoldenCases.load();
        ByteBuffer in = ByteBuffer.allocateDirect(cases.size() * CASE_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < cases.size(); i++) {
            pack(in, i * CASE_BYTES, cases.get(i));
        }
        CudaContext ctx = Cuda.device(0).primaryContext();
        try (PtxModule module = ctx.loadModule("ibgda");
             DeviceMemory input = ctx.allocate(in.capacity());
             DeviceMemory output = ctx.allocate((long) cases.size() * OUT_BYTES);
             CudaStream stream = ctx.createStream()) {
            input.copyFromHost(0, in);
            module.function("gda4j_ibgda_encode_cases").launch((cases.size() + 63) / 64, 64, 0, stream,
                    KernelArgs.create().pointer(input.pointer()).u32(cases.size()).pointer(output.pointer()));
            stream.synchronize();
            byte[] out = new byte[cases.size() * OUT_BYTES];
            output.copyToHost(0, out, 0, out.length);
            List<String> checked = new ArrayList<>();
            for (int i = 0; i < cases.size(); i++) {
                GoldenCases.Case c = cases.get(i);
                ByteBuffer ring = ByteBuffer.wrap(out, i * OUT_BYTES, OUT_BYTES).slice().order(ByteOrder.LITTLE_ENDIAN);
                switch (c.kind()) {
                    case "dbr", "doorbell" -> {
                        byte[] got = new byte[8];
                        ring.get(0, got);
                        assertArrayEquals(Mlx5GoldenTest.encode(c).bytes(), got, c.name());
                    }
                    case "cqe", "err_cqe" -> checkParsedCqe(c, ring);
                    default -> {
                        byte[] expected = Mlx5GoldenTest.encode(c).bytes();
                        byte[] got = new byte[expected.length];
                        long index = c.number("wqe_index");
                        for (int b = 0; b < got.length; b++) {
                            got[b] = ring.get(WqeDescriptor.byteOffset(index, b, RING_WQEBBS));
                        }
                        assertArrayEquals(expected, got, c.name() + ": device WQE bytes differ from the golden ones");
                    }
                }
                checked.add(c.name());
            }
            assertEquals(cases.size(), checked.size());
        }
    }

    private static void checkParsedCqe(GoldenCases.Case c, ByteBuffer f) {
        boolean error = c.kind().equals("err_cqe");
        long index = c.number("cqe_index");
        int count = c.intValue("cqe_count");
        assertEquals(error ? c.intValue("opcode") : CqeOpcode.REQ, f.getInt(0), c.name() + " opcode");
        assertEquals(CqeDescriptor.ownerBit(index, count), f.getInt(4), c.name() + " owner");
        assertEquals(c.intValue("wqe_counter"), f.getInt(8), c.name() + " wqe_counter");
        assertEquals(c.intValue("qpn"), f.getInt(12), c.name() + " qpn");
        assertEquals(c.intValue("s_wqe_opcode"), f.getInt(16), c.name() + " s_wqe_opcode");
        assertEquals(1, f.getInt(20), c.name() + ": the device must see the CQE as fresh at its own index");
        if (error) {
            assertEquals(c.intValue("syndrome"), f.getInt(24), c.name() + " syndrome");
            assertEquals(c.intValue("vendor_err_synd"), f.getInt(28), c.name() + " vendor syndrome");
        }
    }
}

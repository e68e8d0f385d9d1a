package io.gda4j.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code device-ptx/include/gda4j/layout/mlx5.cuh} against the Java side, with nvcc and no GPU: it compiles and
 * assembles for sm_90; it declares every Java layout constant under the same name with the same value; and its
 * encoders, built for the host, write the golden cases byte for byte as the Java encoders do (which Mlx5GoldenTest
 * holds to rdma-core). Skipped where nvcc is missing.
 */
@RequiresCompilers(tools = "nvcc", promised = false)
class Mlx5CuhTest {
    @TempDir
    static Path buildDir;

    private static Path include;

    @BeforeAll
    static void findHeader() throws InterruptedException {
        GccProgram.requireTool("nvcc", "gda4j/layout/mlx5.cuh cannot be compiled here");
        include = GccProgram.deviceInclude("gda4j/layout/mlx5.cuh");
    }

    @Test
    void compilesAndAssemblesForSm90() throws Exception {
        GccProgram.runCommand(List.of("nvcc", "-std=c++17", "-arch=sm_90", "-x", "cu", "-I", include.toString(), "-c",
                GccProgram.source("mlx5_cuh_device_check.cu").toString(), "-o",
                buildDir.resolve("device_check.o").toString()));
    }

    @Test
    void headerNamesEveryJavaConstantWithTheSameValue() throws Exception {
        StringBuilder source = new StringBuilder("#include <gda4j/layout/mlx5.cuh>\n");
        for (Class<?> type : Mlx5GoldenTest.CONSTANT_CLASSES) {
            for (Field field : type.getDeclaredFields()) {
                int modifiers = field.getModifiers();
                if (Modifier.isPublic(modifiers) && Modifier.isStatic(modifiers) && field.getType() == int.class) {
                    String name = "gda4j::mlx5::" + type.getSimpleName() + "::" + field.getName();
                    source.append("static_assert((unsigned long long)(").append(name).append(") == ")
                            .append(Integer.toUnsignedString(field.getInt(null))).append("ULL, \"").append(name)
                            .append(" differs from the Java constant\");\n");
                }
            }
        }
        Path file = buildDir.resolve("constants_check.cu");
        Files.writeString(file, source);
        GccProgram.runCommand(List.of("nvcc", "-std=c++17", "-arch=sm_90", "-I", include.toString(), "-c",
                file.toString(), "-o", buildDir.resolve("constants_check.o").toString()));
    }

    private static Path hostGolden() throws Exception {
        Path executable = buildDir.resolve("mlx5_cuh_golden");
        if (!Files.exists(executable)) {
            GccProgram.runCommand(List.of("nvcc", "-std=c++17", "-I", include.toString(),
                    GccProgram.source("mlx5_cuh_golden.cu").toString(), "-o", executable.toString()));
        }
        return executable;
    }

    @TestFactory
    Stream<DynamicTest> hostBuildWritesTheJavaBytes() throws Exception {
        Map<String, String> fromCuh = new HashMap<>();
        for (String line : GccProgram.run(hostGolden(), GoldenCases.text(), "cases").strip().split("\n")) {
            String[] parts = line.split(" ");
            fromCuh.put(parts[0], parts.length > 1 ? parts[1] : "");
        }
        return GoldenCases.load().stream().filter(c -> !c.kind().endsWith("cqe"))
                .map(c -> DynamicTest.dynamicTest(c.kind() + " " + c.name(), () -> assertEquals(
                        HexFormat.of().formatHex(Mlx5GoldenTest.encode(c).bytes()), fromCuh.get(c.name()),
                        c.name() + ": mlx5.cuh bytes differ from the Java encoder's")));
    }

    @Test
    void cqeTailReadersAgreeWithTheJavaDecoder() throws Exception {
        StringBuilder input = new StringBuilder();
        List<GoldenCases.Case> cqes = GoldenCases.load().stream().filter(c -> c.kind().endsWith("cqe")).toList();
        for (GoldenCases.Case c : cqes) {
            byte[] cqe = Mlx5GoldenTest.encode(c).bytes();
            input.append(c.name()).append(' ')
                    .append(HexFormat.of().formatHex(cqe, CqeDescriptor.TAIL_OFFSET, CqeDescriptor.CQE_SIZE))
                    .append(' ').append(c.number("cqe_index")).append(' ').append(c.number("cqe_count")).append('\n');
        }
        Map<String, String> decoded = new HashMap<>();
        for (String line : GccProgram.run(hostGolden(), input.toString(), "tails").strip().split("\n")) {
            int space = line.indexOf(' ');
            decoded.put(line.substring(0, space), line.substring(space + 1));
        }
        for (GoldenCases.Case c : cqes) {
            DecodedCqe java = CqeDecoder.decode(Mlx5GoldenTest.encode(c).ring(), c.number("cqe_index"));
            String expected = String.format("opcode=%d owner=%d qpn=%d wqe_counter=%d s_wqe_opcode=%d fresh=1",
                    java.cqeOpcode(), java.owner(), java.qpn(), java.wqeCounter(), java.wqeOpcode());
            assertEquals(expected, decoded.get(c.name()), c.name());
        }
    }
}

package io.gda4j.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code device-ptx/include/gda4j/transport/proxy/fifo.cuh} against {@link TriggerFifoDescriptor}, with g++ and no GPU:
 * every public constant of the Java class exists in the header under the same name with the same value (static_assert),
 * and the header's encoders, which the GPU runs, write the same words as the Java encoders for a few thousand
 * cases, limits included.
 */
@EnabledIf(value = "gxxOrPromised", disabledReason = "g++ is not on the PATH: cannot compile transport/proxy/fifo.cuh to compare"
        + " it with Java (the layout tests need gcc, g++ and libibverbs-dev: apt-get install gcc g++ libibverbs-dev)")
class TriggerFifoLayoutTest {
    /** Where the build promises g++ (CI sets it), a missing one fails the class instead of skipping it. */
    static final boolean REQUIRED = Boolean.getBoolean("gda4j.test.requireCompilers");

    @TempDir
    static Path dir;
    static Path include;

    @BeforeAll
    static void findHeader() {
        assertTrue(onPath("g++"), "g++ is not on the PATH, and gda4j.test.requireCompilers says the build promises it");
        include = io.gda4j.mlx5.GccProgram.deviceInclude("gda4j/transport/proxy/fifo.cuh");
    }

    @Test
    void headerNamesEveryJavaConstantWithTheSameValue() throws Exception {
        StringBuilder src = new StringBuilder("#include <gda4j/transport/proxy/fifo.cuh>\nint main() { return 0; }\n");
        int checked = 0;
        for (Field f : TriggerFifoDescriptor.class.getDeclaredFields()) {
            int m = f.getModifiers();
            if (!Modifier.isPublic(m) || !Modifier.isStatic(m) || f.getName().equals("FIELD_LIMIT")) {
                continue;
            }
            long value = f.getType() == int.class ? f.getInt(null) : f.getLong(null);
            String name = "gda4j::proxy::TriggerFifoDescriptor::" + f.getName();
            src.append("static_assert((unsigned long long)(").append(name).append(") == ")
                    .append(Long.toUnsignedString(value)).append("ULL, \"").append(f.getName())
                    .append(" differs from io.gda4j.proxy.TriggerFifoDescriptor\");\n");
            checked++;
        }
        assertEquals(true, checked > 40, "only " + checked + " constants found");
        run(compile("constants", src.toString()));
    }

    /** The proxy's device error codes (fifo.cuh) against the decoder that words them, each by its name. */
    @Test
    void errorCodesMatchTheDecoder() throws Exception {
        StringBuilder src = new StringBuilder("#include <gda4j/transport/proxy/fifo.cuh>\nint main() { return 0; }\n");
        new ProxyErrorDecoder().codes().forEach((value, name) -> src.append("static_assert(gda4j::ERROR_").append(name)
                .append(" == ").append(value).append(", \"").append(name).append(" differs from ProxyErrorDecoder\");\n"));
        assertEquals(4, new ProxyErrorDecoder().codes().size());
        run(compile("codes", src.toString()));
    }

    @Test
    void headerEncodersWriteTheJavaWords() throws Exception {
        List<String> calls = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        SplittableRandom rnd = new SplittableRandom(3);
        long max = TriggerFifoDescriptor.FIELD_LIMIT - 1;
        for (int i = 0; i < 2000; i++) {
            long dst = i == 0 ? max : rnd.nextLong(TriggerFifoDescriptor.FIELD_LIMIT);
            long src = i == 0 ? max : rnd.nextLong(TriggerFifoDescriptor.FIELD_LIMIT);
            long size = i == 0 ? max : rnd.nextLong(TriggerFifoDescriptor.FIELD_LIMIT);
            int dm = rnd.nextInt(4);
            int sm = rnd.nextInt(4);
            int kind = rnd.nextBoolean() ? TriggerFifoDescriptor.KIND_PUT : TriggerFifoDescriptor.KIND_PUT_SIGNAL;
            calls.add(String.format(Locale.ROOT, "put_word0(%d, %dull, %dull)", kind, dst, size));
            expected.add(hex(TriggerFifoDescriptor.putWord0(kind, dst, size)));
            calls.add(String.format(Locale.ROOT, "put_word1(%dull, %dull, %d, %d)", src, size, dm, sm));
            expected.add(hex(TriggerFifoDescriptor.putWord1(src, size, dm, sm)));
            calls.add(String.format(Locale.ROOT, "(uint64_t)put_fits(%dull, %dull, %dull, %d, %d)", dst, src, size, dm, sm));
            expected.add(hex(1));
            long value = i == 1 ? Long.MIN_VALUE : rnd.nextLong();
            long word = rnd.nextLong(TriggerFifoDescriptor.FIELD_LIMIT) & ~7L;
            int op = rnd.nextInt(2);
            calls.add(String.format(Locale.ROOT, "signal_word0(%d, %d, %dull, %sull, %d)", TriggerFifoDescriptor.KIND_SIGNAL,
                    op, word, Long.toUnsignedString(value), dm));
            expected.add(hex(TriggerFifoDescriptor.signalWord0(TriggerFifoDescriptor.KIND_SIGNAL, op, word, value, dm)));
            calls.add(String.format(Locale.ROOT, "signal_word1(%sull)", Long.toUnsignedString(value)));
            expected.add(hex(TriggerFifoDescriptor.signalWord1(value)));
            long position = rnd.nextLong(1L << 40);
            calls.add(String.format(Locale.ROOT, "lap_bits(%dull, %d)", position, 9));
            expected.add(hex(TriggerFifoDescriptor.lapBits(position, 9)));
            calls.add(String.format(Locale.ROOT, "slot_offset(%dull, %d) + TriggerFifoDescriptor::RING_OFFSET", position, 512));
            expected.add(hex(TriggerFifoDescriptor.slotOffset(position, 512)));
        }
        long[][] refused = {{TriggerFifoDescriptor.FIELD_LIMIT, 0, 0, 0, 0}, {0, TriggerFifoDescriptor.FIELD_LIMIT, 0, 0, 0},
            {0, 0, TriggerFifoDescriptor.FIELD_LIMIT, 0, 0}, {0, 0, 0, 4, 0}, {0, 0, 0, 0, 4}};
        for (long[] r : refused) {
            calls.add(String.format(Locale.ROOT, "(uint64_t)put_fits(%dull, %dull, %dull, %d, %d)", r[0], r[1], r[2], r[3], r[4]));
            expected.add(hex(0));
        }
        calls.add("(uint64_t)signal_fits(12, 0, 0)");
        expected.add(hex(0));
        calls.add("(uint64_t)signal_fits(16, 2, 0)");
        expected.add(hex(0));
        calls.add("control_word0(TriggerFifoDescriptor::KIND_FLUSH)");
        expected.add(hex(TriggerFifoDescriptor.controlWord0(TriggerFifoDescriptor.KIND_FLUSH)));
        calls.add("nop_word1(~0ull)");
        expected.add(hex(TriggerFifoDescriptor.nopWord1(-1L)));

        StringBuilder src = new StringBuilder("#include <gda4j/transport/proxy/fifo.cuh>\n#include <cstdio>\n"
                + "using namespace gda4j::proxy;\nint main() {\n");
        for (String c : calls) {
            src.append("  std::printf(\"%016llx\\n\", (unsigned long long)(").append(c).append("));\n");
        }
        src.append("  return 0;\n}\n");
        String[] got = run(compile("encoders", src.toString())).split("\n");
        assertEquals(expected.size(), got.length);
        for (int i = 0; i < got.length; i++) {
            assertEquals(expected.get(i), got[i].trim(), calls.get(i) + ": fifo.cuh and Java disagree");
        }
    }

    @Test
    void structsHaveTheDescribedOffsets() throws Exception {
        String src = "#include <gda4j/transport/proxy/fifo.cuh>\n#include <cstddef>\n#include <cstdio>\nusing namespace gda4j::proxy;\n"
                + "int main() {\n"
                + "  std::printf(\"CHANNEL_RING_OFFSET %zu\\n\", offsetof(ProxyChannel, ring));\n"
                + "  std::printf(\"CHANNEL_CONTROL_OFFSET %zu\\n\", offsetof(ProxyChannel, control));\n"
                + "  std::printf(\"CHANNEL_CAPACITY_OFFSET %zu\\n\", offsetof(ProxyChannel, capacity));\n"
                + "  std::printf(\"CHANNEL_CAPACITY_LOG2_OFFSET %zu\\n\", offsetof(ProxyChannel, capacity_log2));\n"
                + "  std::printf(\"CHANNEL_RANK_OFFSET %zu\\n\", offsetof(ProxyChannel, rank));\n"
                + "  std::printf(\"CHANNEL_PEER_OFFSET %zu\\n\", offsetof(ProxyChannel, peer));\n"
                + "  std::printf(\"CHANNEL_HEAD_OFFSET %zu\\n\", offsetof(ProxyChannel, head));\n"
                + "  std::printf(\"CHANNEL_TAIL_CACHE_OFFSET %zu\\n\", offsetof(ProxyChannel, tail_cache));\n"
                + "  std::printf(\"CHANNEL_DONE_OFFSET %zu\\n\", offsetof(ProxyChannel, done));\n"
                + "  std::printf(\"CHANNEL_LENGTH %zu\\n\", sizeof(ProxyChannel));\n"
                + "  std::printf(\"CONTROL_TAIL_OFFSET %zu\\n\", offsetof(ProxyControl, tail));\n"
                + "  std::printf(\"CONTROL_STATE_OFFSET %zu\\n\", offsetof(ProxyControl, state));\n"
                + "  std::printf(\"RING_OFFSET %zu\\n\", sizeof(ProxyControl));\n"
                + "  return 0;\n}\n";
        Map<String, Long> got = new HashMap<>();
        for (String line : run(compile("structs", src)).split("\n")) {
            String[] kv = line.trim().split(" ");
            got.put(kv[0], Long.parseLong(kv[1]));
        }
        assertEquals(13, got.size());
        for (Map.Entry<String, Long> e : got.entrySet()) {
            long java = TriggerFifoDescriptor.class.getField(e.getKey()).getInt(null);
            assertEquals(java, e.getValue().longValue(), e.getKey() + ": struct offset differs from the descriptor");
        }
    }

    private static String hex(long v) {
        return String.format(Locale.ROOT, "%016x", v);
    }

    private static Path compile(String name, String source) throws IOException, InterruptedException {
        Path file = dir.resolve(name + ".cpp");
        Files.writeString(file, source);
        Path exe = dir.resolve(name);
        Process p = new ProcessBuilder("g++", "-std=c++17", "-Wall", "-Werror", "-I", include.toString(), file.toString(),
                "-o", exe.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(true, p.waitFor(120, TimeUnit.SECONDS), "g++ did not finish");
        assertEquals(0, p.exitValue(), "g++ failed (a failed static_assert names the constant):\n" + out);
        return exe;
    }

    private static String run(Path exe) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(true, p.waitFor(60, TimeUnit.SECONDS), exe + " did not finish");
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    static boolean gxxOrPromised() {
        return REQUIRED || onPath("g++");
    }

    static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }
}

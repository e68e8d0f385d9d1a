package io.gda4j.mlx5;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The golden case table ({@code io/gda4j/mlx5/golden-cases.txt}): one definition of every case, read by the Java
 * tests, fed to {@code mlx5_golden.c} on stdin, and meant for the GPU test that encodes the same cases on the device.
 */
public final class GoldenCases {
    public static final String RESOURCE = "/io/gda4j/mlx5/golden-cases.txt";

    private GoldenCases() {
    }

    /** One line of the table. */
    public record Case(String kind, String name, Map<String, String> fields) {
        public String text(String key) {
            String value = fields.get(key);
            if (value == null) {
                throw new IllegalArgumentException("golden case " + name + " has no " + key);
            }
            return value;
        }

        /** A C literal (0x hex or decimal) as an unsigned 64-bit value. */
        public long number(String key) {
            String value = text(key);
            return value.startsWith("0x") || value.startsWith("0X") ? Long.parseUnsignedLong(value.substring(2), 16)
                    : Long.parseUnsignedLong(value);
        }

        public int intValue(String key) {
            long value = number(key);
            if (value >>> 32 != 0) {
                throw new IllegalArgumentException("golden case " + name + ": " + key + " does not fit in 32 bits");
            }
            return (int) value;
        }

        /** The {@code payload} field: hex bytes, {@code -} for none, or {@code pattern:N}. */
        public byte[] payload() {
            String value = text("payload");
            if (value.equals("-")) {
                return new byte[0];
            }
            if (value.startsWith("pattern:")) {
                int length = Integer.parseInt(value.substring("pattern:".length()));
                byte[] bytes = new byte[length];
                for (int i = 0; i < length; i++) {
                    bytes[i] = (byte) (i * 37 + 11);
                }
                return bytes;
            }
            return HexFormat.of().parseHex(value);
        }
    }

    /** The table's text, as it is passed to the C program. */
    public static String text() {
        try (InputStream in = GoldenCases.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is not on the test class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** All cases, in file order. */
    public static List<Case> load() {
        List<Case> cases = new ArrayList<>();
        for (String line : text().split("\n")) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            String[] tokens = trimmed.split("\\s+");
            Map<String, String> fields = new LinkedHashMap<>();
            for (int i = 1; i < tokens.length; i++) {
                int eq = tokens[i].indexOf('=');
                if (eq <= 0) {
                    throw new IllegalStateException("golden case line without key=value: " + line);
                }
                fields.put(tokens[i].substring(0, eq), tokens[i].substring(eq + 1));
            }
            String name = fields.get("name");
            if (name == null) {
                throw new IllegalStateException("golden case line without name=: " + line);
            }
            cases.add(new Case(tokens[0], name, Map.copyOf(fields)));
        }
        return cases;
    }
}

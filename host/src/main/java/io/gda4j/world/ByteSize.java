package io.gda4j.world;

import java.util.Locale;

/**
 * Byte counts as people type them: {@code 8}, {@code 4k}, {@code 4KiB}, {@code 1m}, {@code 256MiB}, {@code 1g}.
 * Binary units throughout (k = 1024), as sizes of GPU buffers are.
 */
public final class ByteSize {
    private ByteSize() {
    }

    /** Parses a size; throws IllegalArgumentException with the accepted forms when the text is not one. */
    public static long parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT).replace("_", "");
        int end = 0;
        while (end < t.length() && Character.isDigit(t.charAt(end))) {
            end++;
        }
        if (end == 0) {
            throw new IllegalArgumentException(malformed(text));
        }
        String unit = t.substring(end).trim();
        int shift;
        switch (unit) {
            case "": case "b":
                shift = 0;
                break;
            case "k": case "kb": case "kib":
                shift = 10;
                break;
            case "m": case "mb": case "mib":
                shift = 20;
                break;
            case "g": case "gb": case "gib":
                shift = 30;
                break;
            default:
                throw new IllegalArgumentException(malformed(text));
        }
        long value;
        try {
            value = Long.parseLong(t.substring(0, end));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(malformed(text), e);
        }
        if (value > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("size '" + text + "' is too large");
        }
        return value << shift;
    }

    /** The shortest exact binary form: 8 B, 4 KiB, 1 MiB, 1536 B. */
    public static String format(long bytes) {
        if (bytes >= (1L << 30) && bytes % (1L << 30) == 0) {
            return (bytes >> 30) + " GiB";
        }
        if (bytes >= (1L << 20) && bytes % (1L << 20) == 0) {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= (1L << 10) && bytes % (1L << 10) == 0) {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }

    private static String malformed(String text) {
        return "size '" + text + "' does not parse: use a number of bytes with an optional unit, e.g. 8, 4k, 64KiB, 1m, 256MiB, 1g";
    }
}

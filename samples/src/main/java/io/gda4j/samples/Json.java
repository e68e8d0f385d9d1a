package io.gda4j.samples;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * JSON text for the commands' {@code --json}, strictly typed: strings quoted, numbers and booleans bare (a double in
 * full, {@link ResultTable#exact}), a number that is not finite (not measured) and a missing value as {@code null}.
 * Maps keep their order.
 */
final class Json {
    private Json() {
    }

    /** {@code v} as JSON: a {@link Map} (string keys), a {@link List}, a String, a Number, a Boolean or null. */
    static String of(Object v) {
        StringBuilder b = new StringBuilder();
        append(b, v);
        return b.toString();
    }

    private static void append(StringBuilder b, Object v) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof Map<?, ?> m) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                b.append(first ? "" : ",").append(quote(String.valueOf(e.getKey()))).append(':');
                append(b, e.getValue());
                first = false;
            }
            b.append('}');
        } else if (v instanceof List<?> l) {
            b.append('[');
            for (int i = 0; i < l.size(); i++) {
                b.append(i == 0 ? "" : ",");
                append(b, l.get(i));
            }
            b.append(']');
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            b.append(Double.isFinite(d) ? ResultTable.exact(d) : "null");
        } else if (v instanceof Number || v instanceof Boolean) {
            b.append(v);
        } else {
            b.append(quote(String.valueOf(v)));
        }
    }

    /** {@code s} as a JSON string literal. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (CellText.isUnsafe(ch)) { // a control character never reaches a terminal that shows the JSON
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}

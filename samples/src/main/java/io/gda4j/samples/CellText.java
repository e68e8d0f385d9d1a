package io.gda4j.samples;

import java.util.Locale;

/**
 * Text the commands print that may come from elsewhere (a CSV read by {@code compare --from}, a device name, a
 * setting): made harmless for the terminal it is shown on and for the spreadsheet a CSV is opened in.
 */
final class CellText {
    private CellText() {
    }

    /**
     * {@code s} with every control character (C0, DEL, C1) and bidirectional override written as {@code \\uXXXX}:
     * an escape sequence in a file must not move the cursor, retitle the window or reorder what is shown.
     */
    static String forTerminal(String s) {
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (isUnsafe(c)) {
                if (b == null) {
                    b = new StringBuilder(s.length() + 8).append(s, 0, i);
                }
                b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else if (b != null) {
                b.append(c);
            }
        }
        return b == null ? s : b.toString();
    }

    /**
     * {@link #forTerminal} and, where the cell starts as a spreadsheet formula does ({@code = + - @}, a tab or a
     * carriage return) and is more than that one character, a leading {@code '}: the cell is then shown as text instead of run (CSV injection).
     */
    static String forSpreadsheet(String s) {
        String t = forTerminal(s);
        return t.length() > 1 && "=+-@\t\r".indexOf(t.charAt(0)) >= 0 ? "'" + t : t;
    }

    /**
     * A comment line of a CSV, which a spreadsheet splits at its commas like any other: each comma-separated part
     * that would start a formula (after leading spaces) gets a leading {@code '}, as {@link #forSpreadsheet} does.
     */
    static String forSpreadsheetLine(String line) {
        String[] parts = forTerminal(line).split(",", -1);
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            String lead = p.substring(0, p.length() - p.stripLeading().length());
            parts[i] = lead + forSpreadsheet(p.stripLeading());
        }
        return String.join(",", parts);
    }

    static boolean isUnsafe(char c) {
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= '\u202a' && c <= '\u202e')
                || (c >= '\u2066' && c <= '\u2069') || c == '\u200e' || c == '\u200f' || c == '\u061c';
    }
}

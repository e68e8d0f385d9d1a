package io.gda4j.samples;

/**
 * A strict JSON syntax check (RFC 8259: objects, arrays, strings, numbers, true, false, null), so the commands' JSON
 * is tested as a parser would read it without a JSON library on the test class path.
 */
final class JsonSyntax {
    private final String s;
    private int i;

    private JsonSyntax(String s) {
        this.s = s;
    }

    /** @throws AssertionError naming the offset where {@code text} stops being one JSON value */
    static void check(String text) {
        JsonSyntax p = new JsonSyntax(text);
        p.value();
        p.blanks();
        if (p.i != text.length()) {
            throw p.error("text after the value");
        }
    }

    private void value() {
        blanks();
        if (i >= s.length()) {
            throw error("end of text where a value belongs");
        }
        char c = s.charAt(i);
        if (c == '{') {
            i++;
            blanks();
            if (peek('}')) {
                i++;
                return;
            }
            do {
                blanks();
                string();
                blanks();
                expect(':');
                value();
                blanks();
            } while (next(','));
            expect('}');
        } else if (c == '[') {
            i++;
            blanks();
            if (peek(']')) {
                i++;
                return;
            }
            do {
                value();
                blanks();
            } while (next(','));
            expect(']');
        } else if (c == '"') {
            string();
        } else if (s.startsWith("true", i) || s.startsWith("null", i)) {
            i += 4;
        } else if (s.startsWith("false", i)) {
            i += 5;
        } else {
            number();
        }
    }

    private void string() {
        expect('"');
        while (i < s.length() && s.charAt(i) != '"') {
            char c = s.charAt(i++);
            if (c < 0x20) {
                throw error("a control character inside a string");
            }
            if (c == '\\') {
                char e = i < s.length() ? s.charAt(i++) : ' ';
                if (e == 'u') {
                    if (i + 4 > s.length() || !s.substring(i, i + 4).matches("[0-9a-fA-F]{4}")) {
                        throw error("a bad \\u escape");
                    }
                    i += 4;
                } else if ("\"\\/bfnrt".indexOf(e) < 0) {
                    throw error("a bad escape");
                }
            }
        }
        expect('"');
    }

    private void number() {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")
                .matcher(s).region(i, s.length());
        if (!m.lookingAt()) {
            throw error("not a value (NaN and Infinity are not JSON)");
        }
        i = m.end();
    }

    private void blanks() {
        while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
    }

    private boolean peek(char c) {
        return i < s.length() && s.charAt(i) == c;
    }

    private boolean next(char c) {
        if (peek(c)) {
            i++;
            return true;
        }
        return false;
    }

    private void expect(char c) {
        if (!next(c)) {
            throw error("'" + c + "' expected");
        }
    }

    private AssertionError error(String what) {
        int from = Math.max(0, i - 30);
        return new AssertionError("not JSON at offset " + i + ": " + what + ", near '" + s.substring(from,
                Math.min(s.length(), i + 30)) + "'");
    }
}

package io.gda4j.moe;

import java.util.function.Supplier;

/** System properties set for the length of a test, and put back after it: the switches the buffers read when made. */
public final class TestProperties {
    private TestProperties() {
    }

    /** {@code body} with system property {@code name} set to {@code value}, the property restored after. */
    public static <T> T with(String name, String value, Supplier<T> body) {
        String was = set(name, value);
        try {
            return body.get();
        } finally {
            set(name, was);
        }
    }

    /** Sets system property {@code name} to {@code value} (null: clears it); returns what it was. */
    public static String set(String name, String value) {
        return value == null ? System.clearProperty(name) : System.setProperty(name, value);
    }
}

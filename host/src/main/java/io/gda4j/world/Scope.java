package io.gda4j.world;

import java.util.Locale;

/**
 * How many GPU threads share one put: one thread, one warp (32 lanes) or one block. Codes are the scope codes of
 * the toolkit's kernels (0, 1, 2).
 */
public enum Scope {
    THREAD(0), WARP(1), BLOCK(2);

    private final int code;

    Scope(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** Threads per block a one-block launch of this scope uses; {@code blockThreads} applies to BLOCK only. */
    public int launchThreads(int blockThreads) {
        switch (this) {
            case THREAD:
                return 1;
            case WARP:
                return 32;
            default:
                return blockThreads;
        }
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses "thread", "warp" or "block" (any case). */
    public static Scope parse(String text) {
        for (Scope s : values()) {
            if (s.label().equalsIgnoreCase(text.trim())) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown scope '" + text + "': use thread, warp or block");
    }
}

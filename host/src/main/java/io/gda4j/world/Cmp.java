package io.gda4j.world;

/** Comparison of {@code wait_until}; codes are the {@code CMP_*} constants of view.cuh. */
public enum Cmp {
    EQ(0, "=="), NE(1, "!="), GT(2, ">"), GE(3, ">="), LT(4, "<"), LE(5, "<=");

    private final int code;
    private final String symbol;

    Cmp(int code, String symbol) {
        this.code = code;
        this.symbol = symbol;
    }

    public int code() {
        return code;
    }

    public String symbol() {
        return symbol;
    }

    public static Cmp ofCode(int code) {
        for (Cmp c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown comparison code " + code);
    }
}

package io.gda4j.moe.core;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * MoeParamsHeaderDescriptor against one parameter block's printout: its {@code head.*} lines give the header's
 * fields where that block holds them, so each block's layout test also proves that it begins with the one header.
 */
public final class MoeParamsHeaderLayout {
    private MoeParamsHeaderLayout() {
    }

    /** Asserts every header constant; returns how many printed lines it checked. */
    public static int check(Map<String, Long> printed, int headOffset, String header) throws IllegalAccessException {
        int checked = 0;
        for (Field f : MoeParamsHeaderDescriptor.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
                Long value = printed.get("head." + f.getName());
                assertNotNull(value, header + " does not print head." + f.getName());
                long expected = f.getName().equals("LENGTH") ? f.getInt(null) : (long) headOffset + f.getInt(null);
                assertEquals(expected, value.longValue(), "head." + f.getName());
                checked++;
            }
        }
        return checked;
    }
}

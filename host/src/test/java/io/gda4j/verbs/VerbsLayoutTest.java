package io.gda4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.mlx5.GccProgram;
import io.gda4j.mlx5.RequiresCompilers;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every struct size, field offset and enum value the verbs bindings use, against {@code <infiniband/verbs.h>} and
 * {@code <infiniband/mlx5dv.h>}: {@code verbs_layout.c} prints them under the Java constants' names, and each
 * side must name exactly what the other does.
 */
@RequiresCompilers(tools = "gcc", headers = {"infiniband/verbs.h", "infiniband/mlx5dv.h"})
class VerbsLayoutTest {
    private static final List<Class<?>> LAYOUT_CLASSES = List.of(IbvDeviceAttrDescriptor.class,
            IbvPortAttrDescriptor.class, IbvGidDescriptor.class, IbvQpCapDescriptor.class,
            IbvQpInitAttrDescriptor.class, IbvGlobalRouteDescriptor.class, IbvAhAttrDescriptor.class,
            IbvQpAttrDescriptor.class, IbvQpDescriptor.class, IbvMrDescriptor.class, IbvPdDescriptor.class,
            IbvCqDescriptor.class, IbvContextDescriptor.class, IbvSendWrDescriptor.class, IbvWcDescriptor.class,
            Mlx5dvQpDescriptor.class, Mlx5dvCqDescriptor.class, Mlx5dvDevxDescriptor.class,
            Mlx5dvObjDescriptor.class, VerbsConstants.class);

    @TempDir
    static Path buildDir;

    private static Map<String, Long> fromHeaders;

    @BeforeAll
    static void compileAndRun() throws Exception {
        Path program = GccProgram.compile(GccProgram.source("verbs_layout.c"), buildDir,
                List.of("infiniband/verbs.h", "infiniband/mlx5dv.h"), List.of());
        fromHeaders = new TreeMap<>();
        for (String line : GccProgram.run(program, null).strip().split("\n")) {
            String[] parts = line.split(" ");
            fromHeaders.put(parts[0], Long.parseLong(parts[1]));
        }
    }

    private static Map<String, Long> javaConstants() throws IllegalAccessException {
        Map<String, Long> constants = new TreeMap<>();
        for (Class<?> type : LAYOUT_CLASSES) {
            for (Field field : type.getDeclaredFields()) {
                int modifiers = field.getModifiers();
                if (Modifier.isPublic(modifiers) && Modifier.isStatic(modifiers) && Modifier.isFinal(modifiers)) {
                    long value = field.getType() == int.class ? field.getInt(null) : field.getLong(null);
                    constants.put(type.getSimpleName() + "." + field.getName(), value);
                }
            }
        }
        return constants;
    }

    @Test
    void javaConstantsMatchTheHeaders() throws IllegalAccessException {
        Map<String, Long> java = javaConstants();
        List<String> mismatches = new ArrayList<>();
        fromHeaders.forEach((name, value) -> {
            Long javaValue = java.get(name);
            if (javaValue != null && javaValue.longValue() != value) {
                mismatches.add(name + ": Java " + javaValue + ", header " + value);
            }
        });
        assertEquals(List.of(), mismatches);
    }

    @Test
    void eachSideNamesWhatTheOtherDoes() throws IllegalAccessException {
        Set<String> notInC = new TreeSet<>(javaConstants().keySet());
        notInC.removeAll(fromHeaders.keySet());
        assertEquals(Set.of(), notInC, "Java constants that verbs_layout.c does not print");

        Set<String> notInJava = new TreeSet<>(fromHeaders.keySet());
        notInJava.removeAll(javaConstants().keySet());
        assertEquals(Set.of(), notInJava, "verbs_layout.c prints names that have no Java constant");
    }

    @Test
    void portFieldsReadLieInTheCompatPrefix() throws IllegalAccessException {
        int prefixEnd = IbvPortAttrDescriptor.PORT_CAP_FLAGS2_OFFSET;
        for (Field field : IbvPortAttrDescriptor.class.getDeclaredFields()) {
            if (field.getName().endsWith("_OFFSET") && !field.getName().equals("PORT_CAP_FLAGS2_OFFSET")) {
                int offset = field.getInt(null);
                assertTrue(offset < prefixEnd, field.getName() + " at " + offset + " is past the bytes the exported"
                        + " ibv_query_port fills (" + prefixEnd + ")");
            }
        }
    }
}

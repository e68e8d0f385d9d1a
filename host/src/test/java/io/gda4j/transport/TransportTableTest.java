package io.gda4j.transport;

import io.gda4j.ibgda.IbgdaTransport;
import io.gda4j.mlx5.RequiresCompilers;
import io.gda4j.p2p.P2pTransport;
import io.gda4j.world.HeaderValues;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Transport} and {@link Capability} against {@code gda4j/transports.def}, row by row: the table compiled with
 * g++ as the device headers read it (src/test/c/transports_table.cpp), so a row added on one side only, a code, a
 * capability bit, a phrase or a view flag that differs, or a row out of order fails here.
 */
@RequiresCompilers(tools = "g++")
class TransportTableTest {
    static List<String[]> lines;

    @BeforeAll
    static void compileAndRun(@TempDir Path tmp) throws IOException, InterruptedException {
        lines = HeaderValues.lines("transports_table.cpp", tmp).stream().map(l -> l.split("\t")).toList();
    }

    static List<String[]> kind(String kind) {
        List<String[]> out = new ArrayList<>();
        for (String[] l : lines) {
            if (l[0].equals(kind)) {
                out.add(l);
            }
        }
        return out;
    }

    @Test
    void everyCapabilityHasTheTablesNameAndBit() {
        List<String[]> caps = kind("CAP");
        assertEquals(Capability.values().length, caps.size(), "capabilities in the table and in Capability");
        for (int i = 0; i < caps.size(); i++) {
            Capability c = Capability.values()[i];
            assertEquals(c.name(), caps.get(i)[1], "capability " + i);
            assertEquals(c.bit(), Integer.parseInt(caps.get(i)[2]), c + "'s bit");
            assertEquals(c.mask(), Integer.parseInt(caps.get(i)[3]), "CAP_" + c);
        }
    }

    @Test
    void everyRowHasTheTablesNameCodePhraseCapabilitiesAndViewFlag() {
        List<String[]> rows = kind("ROW");
        List<String[]> derived = kind("DERIVED");
        assertEquals(Transport.values().length, rows.size(), "rows in the table and in Transport");
        assertEquals(String.valueOf(rows.size()), kind("COUNT").get(0)[1], "TRANSPORT_COUNT");
        for (int i = 0; i < rows.size(); i++) {
            Transport t = Transport.values()[i];
            String[] row = rows.get(i);
            assertEquals(t.name(), row[1], "row " + i);
            assertEquals(t.label(), row[2], t + "'s name as users type it");
            assertEquals(t.code(), Integer.parseInt(row[3]), t + "'s code");
            assertEquals(t.capabilityBits(), Integer.parseInt(row[4]), t + "'s capabilities: " + t.capabilities());
            assertEquals(t.viewFlag(), Integer.parseInt(row[5]), t + "'s view flag");
            assertEquals(t.phrase(), row[6], t + "'s phrase");
            assertEquals(List.of("DERIVED", t.name(), row[3], row[4], row[5]), Arrays.asList(derived.get(i)),
                    "TRANSPORT_, CAPS_ and VIEW_FLAG_" + t + " of layout/view.cuh");
        }
    }

    @Test
    void codesAndViewFlagsAreDistinctAndTheWorldsRowsComeFirst() {
        Set<Integer> codes = new java.util.HashSet<>();
        int flags = 0;
        for (Transport t : Transport.values()) {
            assertTrue(codes.add(t.code()), "two rows have code " + t.code());
            assertEquals(0, flags & t.viewFlag(), t + "'s view flag is another row's");
            assertTrue(Integer.bitCount(t.viewFlag()) <= 1, t + " sets one view flag at most");
            flags |= t.viewFlag();
        }
        assertEquals(0, Transport.NONE.code());
        assertEquals(1, Transport.SELF.code());
        assertEquals(EnumSet.noneOf(Capability.class), Transport.NONE.capabilities(), "NONE reaches nothing");
    }

    @Test
    void eachProviderReturnsItsOwnRowNamedAsUsersTypeIt() {
        assertSame(Transport.P2P, new P2pTransport().transport());
        assertSame(Transport.IBGDA, new IbgdaTransport().transport());
        assertEquals("p2p", new P2pTransport().name());
        assertEquals("ibgda", new IbgdaTransport().name());
    }

    @Test
    void toStringPrintsTheUpperCaseNameAndOfCodeFindsEachRow() {
        // Tables print transports ("transport P2P"): the upper-case name, as the enum's constants are spelled.
        assertEquals("P2P", Transport.P2P.toString());
        assertEquals("transport PROXY", "transport " + Transport.PROXY);
        for (Transport t : Transport.values()) {
            assertEquals(Optional.of(t), Transport.ofCode(t.code()));
        }
        assertEquals(Optional.empty(), Transport.ofCode(99));
        assertThrows(UnsupportedOperationException.class, () -> Transport.P2P.capabilities().add(Capability.DIRECT));
    }
}

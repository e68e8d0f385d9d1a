package io.gda4j.moe;

import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.transport.Transport;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Which low-latency protocol a world runs: the tagged one by default where every pair is p2p or self, the counted one
 * where some pair is proxy or ibgda (MoeBuffer's staged pairs) or where the property asks for it.
 */
class MoeLowLatencyProtocolTest {
    private static final MoeConfig DEEP_EP = MoeConfig.deepEpLowLatencyBuilder().build();

    /** The protocol of a 2-rank world whose one other pair is over {@code t}, under the property set to {@code asked}. */
    private static boolean tagged(Transport t, String asked) {
        return TestProperties.with(LowLatencySizing.PROTOCOL_PROP_NAME, asked,
                () -> DEEP_EP.lowLatencySizing(2, MoeBuffer.staged(t)).tagged());
    }

    @Test
    void directWorldsRunTheTaggedProtocolAndStagedOnesTheCounted() {
        EnumSet<Transport> direct = EnumSet.of(Transport.SELF, Transport.P2P);
        for (Transport t : EnumSet.complementOf(EnumSet.of(Transport.NONE))) {
            assertEquals(direct.contains(t), tagged(t, null), t.label() + ", by default");
            assertEquals(direct.contains(t), tagged(t, "tagged"), t.label() + ", asked for tagged");
            assertFalse(tagged(t, "counted"), t.label() + ", asked for counted");
        }
    }

    @Test
    void theCountedProtocolIsTheOnlyOneWithStagingSections() {
        for (LowLatencySizing.Protocol p : LowLatencySizing.Protocol.values()) {
            LowLatencySizing staged = DEEP_EP.lowLatencySizing(8, true, p);
            assertFalse(staged.tagged(), p.name().toLowerCase(Locale.ROOT) + " asked, a proxy or ibgda pair");
            assertEquals(7408, staged.msgBytes(), "messages for the staged pairs");
        }
    }
}

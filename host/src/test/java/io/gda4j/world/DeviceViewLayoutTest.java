package io.gda4j.world;

import io.gda4j.mlx5.RequiresCompilers;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import io.gda4j.world.ErrorRecordDescriptor.Op;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/** The Java descriptors and enums against layout/view.cuh, compiled with g++: every offset and the world's codes. */
@RequiresCompilers(tools = "g++")
class DeviceViewLayoutTest {
    static Map<String, Long> header;

    @BeforeAll
    static void compileAndRun(@TempDir Path tmp) throws IOException, InterruptedException {
        header = HeaderValues.of("view_layout.cpp", tmp);
    }

    static void same(String name, long javaValue) {
        Long h = header.get(name);
        assertNotNull(h, name + " missing from view.cuh output");
        assertEquals(h.longValue(), javaValue, name + ": view.cuh says " + h + ", Java says " + javaValue);
    }

    @Test
    void deviceViewHeaderAndPeerEntryMatch() {
        same("VIEW_MAGIC", DeviceViewDescriptor.VIEW_MAGIC);
        same("VIEW_VERSION", DeviceViewDescriptor.VIEW_VERSION);
        same("MAGIC_OFFSET", DeviceViewDescriptor.MAGIC_OFFSET);
        same("VERSION_OFFSET", DeviceViewDescriptor.VERSION_OFFSET);
        same("RANK_OFFSET", DeviceViewDescriptor.RANK_OFFSET);
        same("NRANKS_OFFSET", DeviceViewDescriptor.NRANKS_OFFSET);
        same("HEAP_BASE_OFFSET", DeviceViewDescriptor.HEAP_BASE_OFFSET);
        same("HEAP_SIZE_BYTES_OFFSET", DeviceViewDescriptor.HEAP_SIZE_BYTES_OFFSET);
        same("ABORT_FLAG_OFFSET", DeviceViewDescriptor.ABORT_FLAG_OFFSET);
        same("ERROR_RECORD_OFFSET", DeviceViewDescriptor.ERROR_RECORD_OFFSET);
        same("TIMEOUT_NS_OFFSET", DeviceViewDescriptor.TIMEOUT_NS_OFFSET);
        same("FLAGS_OFFSET", DeviceViewDescriptor.FLAGS_OFFSET);
        same("HEADER_LENGTH", DeviceViewDescriptor.HEADER_LENGTH);
        same("PEER_NIC_ATOMICS", AtomicRouting.PEER_NIC_ATOMICS);
        same("PEER_HANDLE_FLAGS", AtomicRouting.PEER_HANDLE_FLAGS);
        same("PEER_TRANSPORT_OFFSET", DeviceViewDescriptor.PEER_TRANSPORT_OFFSET);
        same("PEER_RANK_OFFSET", DeviceViewDescriptor.PEER_RANK_OFFSET);
        same("PEER_HEAP_OFFSET", DeviceViewDescriptor.PEER_HEAP_OFFSET);
        same("PEER_HANDLE_OFFSET", DeviceViewDescriptor.PEER_HANDLE_OFFSET);
        same("PEER_RKEY_OFFSET", DeviceViewDescriptor.PEER_RKEY_OFFSET);
        same("PEER_LKEY_OFFSET", DeviceViewDescriptor.PEER_LKEY_OFFSET);
        same("PEER_ABORT_FLAG_OFFSET", DeviceViewDescriptor.PEER_ABORT_FLAG_OFFSET);
        same("PEER_CAPS_OFFSET", DeviceViewDescriptor.PEER_CAPS_OFFSET);
        same("PEER_ENTRY_LENGTH", DeviceViewDescriptor.PEER_ENTRY_LENGTH);
        assertEquals(64 + 3 * 64, DeviceViewDescriptor.viewLength(3));
        assertEquals(64 + 2 * 64, DeviceViewDescriptor.peerEntryOffset(2));
    }

    @Test
    void errorRecordMatches() {
        same("ERR.CODE_OFFSET", ErrorRecordDescriptor.CODE_OFFSET);
        same("ERR.RANK_OFFSET", ErrorRecordDescriptor.RANK_OFFSET);
        same("ERR.PEER_OFFSET", ErrorRecordDescriptor.PEER_OFFSET);
        same("ERR.OP_OFFSET", ErrorRecordDescriptor.OP_OFFSET);
        same("ERR.OFFSET_OFFSET", ErrorRecordDescriptor.OFFSET_OFFSET);
        same("ERR.EXPECTED_OFFSET", ErrorRecordDescriptor.EXPECTED_OFFSET);
        same("ERR.SEEN_OFFSET", ErrorRecordDescriptor.SEEN_OFFSET);
        same("ERR.ELAPSED_NS_OFFSET", ErrorRecordDescriptor.ELAPSED_NS_OFFSET);
        same("ERR.BLOCK_OFFSET", ErrorRecordDescriptor.BLOCK_OFFSET);
        same("ERR.THREAD_OFFSET", ErrorRecordDescriptor.THREAD_OFFSET);
        same("ERR.CMP_OFFSET", ErrorRecordDescriptor.CMP_OFFSET);
        same("ERR.CLAIMED_OFFSET", ErrorRecordDescriptor.CLAIMED_OFFSET);
        same("ERR.LENGTH", ErrorRecordDescriptor.LENGTH);
    }

    @Test
    void codesMatch() {
        // The transports' codes are checked row by row by TransportTableTest; the world's error codes here, and
        // each other owner's beside its headers (DeviceErrorCodesTest in gda4j-checks: every code once).
        for (Code c : Code.values()) {
            same("CODE." + c.name(), c.value());
        }
        for (Op o : Op.values()) {
            same("OP." + o.name(), o.value());
        }
        for (SignalOp s : SignalOp.values()) {
            same("SIGNAL." + s.name(), s.code());
        }
        for (Cmp c : Cmp.values()) {
            same("CMP." + c.name(), c.code());
        }
    }

    @Test
    void inlineSlotMatchesAndRejectsHalvesOfTwoMessages() {
        same("SLOT.SIZE", InlineSlotDescriptor.SIZE);
        same("SLOT.ALIGNMENT", InlineSlotDescriptor.ALIGNMENT);
        same("SLOT.HALF_SIZE", InlineSlotDescriptor.HALF_SIZE);
        same("SLOT.LO_HALF_OFFSET", InlineSlotDescriptor.LO_HALF_OFFSET);
        same("SLOT.HI_HALF_OFFSET", InlineSlotDescriptor.HI_HALF_OFFSET);
        same("SLOT.SEQ_SHIFT", InlineSlotDescriptor.SEQ_SHIFT);
        same("SLOT.half(0x11223344,7)", InlineSlotDescriptor.half(0x11223344, 7));
        // The device's rule, case by case, and the Java mirror agreeing with it.
        long h17 = InlineSlotDescriptor.half(1, 7);
        long h27 = InlineSlotDescriptor.half(2, 7);
        long h18 = InlineSlotDescriptor.half(1, 8);
        long h28 = InlineSlotDescriptor.half(2, 8);
        same("SLOT.whole(7,7,7)", 1);
        same("SLOT.whole(8,7,7)", 0); // low half of message 8, high half of message 7: never returned
        same("SLOT.whole(8,8,7)", 1);
        same("SLOT.whole(6,6,7)", 0);
        same("SLOT.whole(1,1,0xffffffff)", 1); // wrap-safe
        assertEquals(true, InlineSlotDescriptor.isWholeAtOrAfter(h17, h27, 7));
        assertEquals(false, InlineSlotDescriptor.isWholeAtOrAfter(h18, h27, 7));
        assertEquals(true, InlineSlotDescriptor.isWholeAtOrAfter(h18, h28, 7));
        assertEquals(false, InlineSlotDescriptor.isWholeAtOrAfter(InlineSlotDescriptor.half(1, 6), h27, 7));
        assertEquals(0x0000000200000001L, InlineSlotDescriptor.valueOf(h17, h27));
        assertEquals(-1, InlineSlotDescriptor.dataOf(InlineSlotDescriptor.half(-1, 3)));
        assertEquals(3, InlineSlotDescriptor.seqOf(InlineSlotDescriptor.half(-1, 3)));
    }
}

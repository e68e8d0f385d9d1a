package io.gda4j.world;

import io.gda4j.mlx5.RequiresCompilers;
import io.gda4j.transport.TransportTag;
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

/** The Java descriptors and enums against gda4j/view.cuh, compiled with g++: every offset and code, one by one. */
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
        same("FLAG_IBGDA", DeviceViewDescriptor.FLAG_IBGDA);
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
        same("VIEW_FLAG_PROXY_PEERS", DeviceViewDescriptor.VIEW_FLAG_PROXY_PEERS);
        same("PEER_TRANSPORT_OFFSET", DeviceViewDescriptor.PEER_TRANSPORT_OFFSET);
        same("PEER_RANK_OFFSET", DeviceViewDescriptor.PEER_RANK_OFFSET);
        same("PEER_HEAP_OFFSET", DeviceViewDescriptor.PEER_HEAP_OFFSET);
        same("PEER_HANDLE_OFFSET", DeviceViewDescriptor.PEER_HANDLE_OFFSET);
        same("PEER_RKEY_OFFSET", DeviceViewDescriptor.PEER_RKEY_OFFSET);
        same("PEER_LKEY_OFFSET", DeviceViewDescriptor.PEER_LKEY_OFFSET);
        same("PEER_ABORT_FLAG_OFFSET", DeviceViewDescriptor.PEER_ABORT_FLAG_OFFSET);
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
        for (TransportTag t : TransportTag.values()) {
            same("TRANSPORT." + t.name(), t.code());
        }
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
}

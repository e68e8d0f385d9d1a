package io.gda4j.world;

import io.gda4j.transport.TransportTag;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import io.gda4j.world.ErrorRecordDescriptor.Op;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The Java descriptors and enums against gda4j/view.cuh, compiled with g++: every offset and code, one by one. */
class DeviceViewLayoutTest {
    static final Path INCLUDE = Path.of("..", "device-ptx", "include");
    static Map<String, Long> header;

    @BeforeAll
    static void compileAndRun(@TempDir Path tmp) throws IOException, InterruptedException {
        assumeTrue(onPath("g++"), "g++ is not installed: cannot compile view.cuh to check the layout");
        Path exe = tmp.resolve("view_layout");
        Process cc = new ProcessBuilder("g++", "-std=c++17", "-x", "c++", "-I", INCLUDE.toString(),
                Path.of("src", "test", "c", "view_layout.cpp").toString(), "-o", exe.toString())
                .redirectErrorStream(true).start();
        String ccOut = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, waitFor(cc), "g++ failed:\n" + ccOut);
        Process run = new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
        String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, waitFor(run), out);
        header = new HashMap<>();
        for (String line : out.split("\n")) {
            String[] kv = line.trim().split(" ");
            header.put(kv[0], Long.parseLong(kv[1]));
        }
    }

    static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }

    static int waitFor(Process p) throws InterruptedException {
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
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

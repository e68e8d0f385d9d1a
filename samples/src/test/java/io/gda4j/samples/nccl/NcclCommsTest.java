package io.gda4j.samples.nccl;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** One communicator per process: how the unique id travels, and the id's layout against nccl.h where one is found. */
class NcclCommsTest {
    private static byte[] id() {
        byte[] id = new byte[LibNccl.UNIQUE_ID_BYTES];
        for (int i = 0; i < id.length; i++) {
            id[i] = (byte) (i * 7 + 1);
        }
        return id;
    }

    @Test
    void rank0sEntryCarriesTheIdAndTheOthersSendNothing() {
        byte[] id = id();
        assertArrayEquals(id, NcclComms.uniqueIdFrom(new byte[][] {NcclComms.idEntry(id), new byte[0], new byte[0]}));
        assertArrayEquals(id, NcclComms.uniqueIdFrom(new byte[][] {NcclComms.idEntry(id)}), "a world of one process");
    }

    @Test
    void rank0sFailureReachesEveryProcessInItsOwnWords() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> NcclComms.uniqueIdFrom(
                new byte[][] {NcclComms.failureEntry("ncclGetUniqueId failed: ncclResult_t 2 (unhandled system error)"),
                        new byte[0]}));
        assertEquals("rank 0's process could not make an NCCL unique id: ncclGetUniqueId failed: ncclResult_t 2"
                + " (unhandled system error)", e.getMessage());
    }

    @Test
    void aGatherOfAnotherProtocolIsRefusedNotUsed() {
        byte[] id = id();
        assertTrue(assertThrows(IllegalStateException.class, () -> NcclComms.uniqueIdFrom(
                new byte[][] {new byte[0], NcclComms.idEntry(id)})).getMessage().contains("sent no NCCL unique id"));
        assertTrue(assertThrows(IllegalStateException.class, () -> NcclComms.uniqueIdFrom(
                new byte[][] {NcclComms.idEntry(id), new byte[] {1}})).getMessage().contains("process 1 sent 1 bytes"));
        assertTrue(assertThrows(IllegalStateException.class, () -> NcclComms.uniqueIdFrom(
                new byte[][] {NcclComms.idEntry(new byte[16])})).getMessage().contains("not an NCCL unique id"));
    }

    @Test
    void withoutNcclInitRankThrowsBeforeJoiningTheGather() {
        assumeTrue(!LibNccl.isAvailable(), "NCCL is available here: initRank would run it");
        AtomicBoolean gathered = new AtomicBoolean();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> NcclComms.initRank(2, 0, mine -> {
            gathered.set(true);
            return new byte[][] {mine};
        }));
        assertEquals(LibNccl.unavailableReason(), e.getMessage());
        assertFalse(gathered.get(), "no all-gather: the callers agree on NCCL's presence before it");
        assertThrows(IllegalArgumentException.class, () -> NcclComms.initRank(2, 2, mine -> new byte[][] {mine}));
    }

    @Test
    void theUniqueIdIsPassedAsOneStructOf128Bytes() {
        assertEquals(LibNccl.UNIQUE_ID_BYTES, new LibNccl.UniqueId().size());
        LibNccl.UniqueId u = new LibNccl.UniqueId(id());
        u.write();
        assertArrayEquals(id(), u.getPointer().getByteArray(0, LibNccl.UNIQUE_ID_BYTES));
        assertThrows(IllegalArgumentException.class, () -> new LibNccl.UniqueId(new byte[127]));
    }

    /** nccl.h beside a libnccl.so.2 this machine has (a pip wheel's nvidia/nccl/include, CUDA's include), if any. */
    private static Optional<Path> ncclHeader() {
        List<File> dirs = new ArrayList<>();
        for (String lib : LibNccl.candidates(LibNccl.LIBRARY_DEFAULT, System.getenv(),
                System.getProperty("user.home", ""))) {
            File f = new File(lib);
            if (f.getParentFile() != null) {
                dirs.add(new File(f.getParentFile().getParentFile(), "include"));
            }
        }
        for (String var : new String[] {"NCCL_HOME", "CUDA_HOME"}) {
            String v = System.getenv(var);
            if (v != null) {
                dirs.add(new File(v, "include"));
            }
        }
        dirs.add(new File("/usr/include"));
        dirs.add(new File("/usr/local/cuda/include"));
        return dirs.stream().map(d -> new File(d, "nccl.h").toPath()).filter(Files::isRegularFile).findFirst();
    }

    @Test
    void theIdSizeIsNcclHeadersWhereOneIsInstalled() throws IOException {
        Optional<Path> header = ncclHeader();
        assumeTrue(header.isPresent(), "no nccl.h on this machine (a pip nvidia-nccl wheel's include/ or CUDA's)");
        Matcher m = Pattern.compile("#define\\s+NCCL_UNIQUE_ID_BYTES\\s+(\\d+)").matcher(Files.readString(header.get()));
        assertTrue(m.find(), header.get() + " defines no NCCL_UNIQUE_ID_BYTES");
        assertEquals(Integer.parseInt(m.group(1)), LibNccl.UNIQUE_ID_BYTES, header.get().toString());
    }
}

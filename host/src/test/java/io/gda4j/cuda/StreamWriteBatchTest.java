package io.gda4j.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.mlx5.GccProgram;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jcuda.driver.CUresult;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link StreamWriteBatch}'s operations, byte for byte, against cuda.h's {@code CUstreamBatchMemOpParams} (gcc; skipped
 * with the reason where no CUDA toolkit header is installed), and its holding rules, without a GPU.
 */
class StreamWriteBatchTest {
    static final String CUDA_FACTS = """
            #include <stdio.h>
            #include <stddef.h>
            #include <cuda.h>
            _Static_assert(__builtin_types_compatible_p(__typeof__(&cuStreamBatchMemOp_v2),
                    CUresult (*)(CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int)),
                    "LibCuda's prototype of cuStreamBatchMemOp_v2");
            int main(void) {
                printf("OP_BYTES %zu\\n", sizeof(CUstreamBatchMemOpParams));
                printf("OP_OFFSET %zu\\n", offsetof(CUstreamBatchMemOpParams, writeValue.operation));
                printf("ADDRESS_OFFSET %zu\\n", offsetof(CUstreamBatchMemOpParams, writeValue.address));
                printf("VALUE_OFFSET %zu\\n", offsetof(CUstreamBatchMemOpParams, writeValue.value64));
                printf("FLAGS_OFFSET %zu\\n", offsetof(CUstreamBatchMemOpParams, writeValue.flags));
                printf("CU_STREAM_MEM_OP_WRITE_VALUE_64 %d\\n", (int) CU_STREAM_MEM_OP_WRITE_VALUE_64);
                printf("CU_STREAM_WRITE_VALUE_DEFAULT %d\\n", (int) CU_STREAM_WRITE_VALUE_DEFAULT);
            #ifdef cuStreamBatchMemOp
                printf("MAPS_TO_V2 %d\\n", 1);
            #endif
                return 0;
            }
            """;

    @Test
    void operationsMatchCudaH(@TempDir Path dir) throws Exception {
        Path include = GccProgram.cudaInclude();
        assumeTrue(include != null, "no CUDA toolkit headers (cuda.h) under CUDA_HOME or /usr/local/cuda*");
        Path file = dir.resolve("batch_mem_op.c");
        Files.writeString(file, CUDA_FACTS);
        Path program = GccProgram.compile(file, dir, List.of(), List.of("-I", include.toString()));
        Map<String, Long> c = new HashMap<>();
        for (String line : GccProgram.run(program, null).strip().split("\n")) {
            String[] kv = line.split(" ");
            c.put(kv[0], Long.parseLong(kv[1]));
        }
        assertEquals(Long.valueOf(StreamWriteBatch.OP_BYTES), c.get("OP_BYTES"));
        assertEquals(Long.valueOf(StreamWriteBatch.OP_OFFSET), c.get("OP_OFFSET"));
        assertEquals(Long.valueOf(StreamWriteBatch.ADDRESS_OFFSET), c.get("ADDRESS_OFFSET"));
        assertEquals(Long.valueOf(StreamWriteBatch.VALUE_OFFSET), c.get("VALUE_OFFSET"));
        assertEquals(Long.valueOf(StreamWriteBatch.FLAGS_OFFSET), c.get("FLAGS_OFFSET"));
        assertEquals(Long.valueOf(StreamWriteBatch.CU_STREAM_MEM_OP_WRITE_VALUE_64),
                c.get("CU_STREAM_MEM_OP_WRITE_VALUE_64"));
        assertEquals(Long.valueOf(0), c.get("CU_STREAM_WRITE_VALUE_DEFAULT"), "the flags every write is given");
        assertEquals(Long.valueOf(1), c.get("MAPS_TO_V2"), "cuda.h no longer maps cuStreamBatchMemOp to the _v2 symbol"
                + " LibCuda binds");
    }

    @Test
    void writesAreEncodedInTheOrderAdded() {
        StreamWriteBatch batch = new StreamWriteBatch(null);
        batch.add(0x7f00_0000_1000L, 42, 10);
        batch.add(0x7f00_0000_2008L, -1L, 11);
        assertEquals(2, batch.size());
        assertEquals(10, batch.firstPosition());

        ByteBuffer want = ByteBuffer.allocate(2 * StreamWriteBatch.OP_BYTES).order(ByteOrder.nativeOrder());
        putWrite(want, 0, 0x7f00_0000_1000L, 42);
        putWrite(want, StreamWriteBatch.OP_BYTES, 0x7f00_0000_2008L, -1L);
        assertArrayEquals(want.array(), batch.encoded());
    }

    @Test
    void aFullBatchRefusesMoreAndSubmittingEmptiesIt() {
        StreamWriteBatch batch = new StreamWriteBatch(null);
        for (int i = 0; i < StreamWriteBatch.CAPACITY; i++) {
            batch.add(8L * i, i, 100 + i);
        }
        assertTrue(batch.isFull());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> batch.add(0, 0, 999));
        assertTrue(e.getMessage().contains("submit it first"), e.getMessage());
        assertEquals(100, batch.firstPosition());
        assertEquals(CUresult.CUDA_SUCCESS, new StreamWriteBatch(null).submit(), "an empty batch queues nothing");
    }

    @Test
    void aReusedSlotIsRewrittenWhole() {
        StreamWriteBatch batch = new StreamWriteBatch(null);
        batch.add(0x1000, 1, 0);
        batch.add(0x2000, 2, 1);
        batch.clear();
        batch.add(0x3000, 3, 2);
        ByteBuffer want = ByteBuffer.allocate(StreamWriteBatch.OP_BYTES).order(ByteOrder.nativeOrder());
        putWrite(want, 0, 0x3000, 3);
        assertArrayEquals(want.array(), batch.encoded());
        assertEquals(2, batch.firstPosition());
    }

    private static void putWrite(ByteBuffer b, int at, long address, long value) {
        b.putInt(at + StreamWriteBatch.OP_OFFSET, StreamWriteBatch.CU_STREAM_MEM_OP_WRITE_VALUE_64);
        b.putLong(at + StreamWriteBatch.ADDRESS_OFFSET, address);
        b.putLong(at + StreamWriteBatch.VALUE_OFFSET, value);
        b.putInt(at + StreamWriteBatch.FLAGS_OFFSET, 0);
    }

}

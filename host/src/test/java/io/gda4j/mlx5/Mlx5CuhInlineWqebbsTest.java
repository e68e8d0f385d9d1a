package io.gda4j.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The WQEBB count {@code gda4j/layout/mlx5.cuh}'s inline encoder returns, which the device records in its
 * {@code wqe_sizes} table to retire slots and to reserve the next ones, for every inline length (built for the host
 * with nvcc, no GPU). The device API's own inline WQEs (an 8-byte SET signal, the 16-byte slot) take one WQEBB, so a
 * return of "always 1" would pass every GPU test; here 29 bytes and more must take two WQEBBs, as the Java encoder and
 * rdma-core count them. Skipped where nvcc is missing.
 */
@RequiresCompilers(tools = "nvcc", promised = false)
@Timeout(300)
class Mlx5CuhInlineWqebbsTest {
    static final int RING_WQEBBS = WqeDescriptor.MAX_WQEBBS;

    @TempDir
    static Path buildDir;

    private static Path include;

    @BeforeAll
    static void findHeader() throws InterruptedException {
        GccProgram.requireTool("nvcc", "gda4j/layout/mlx5.cuh cannot be compiled here");
        include = GccProgram.deviceInclude("gda4j/layout/mlx5.cuh");
    }

    /** "length wqebbs" lines from the header's encoder, for lengths 0 .. MAX_INLINE_BYTES, each wrapping the ring. */
    static String deviceCounts() throws Exception {
        Path source = buildDir.resolve("inline_wqebbs.cu");
        Files.writeString(source, String.join("\n",
                "#include <gda4j/layout/mlx5.cuh>",
                "#include <cstdio>",
                "#include <vector>",
                "using namespace gda4j::mlx5;",
                "int main() {",
                "  const uint32_t ring_wqebbs = " + RING_WQEBBS + ";",
                "  std::vector<uint8_t> ring(64u * ring_wqebbs, 0);",
                "  std::vector<uint8_t> payload(WqeDescriptor::MAX_INLINE_BYTES + 1, 0x5a);",
                "  for (uint32_t length = 0; length <= WqeDescriptor::MAX_INLINE_BYTES; ++length) {",
                "    // the last slot of the ring: a WQE of two or more WQEBBs wraps to slot 0",
                "    uint32_t used = write_rdma_write_inline(ring.data(), ring_wqebbs, ring_wqebbs - 1, 0x123, 0x08,",
                "                                            0x1000, 7, payload.data(), length);",
                "    std::printf(\"%u %u\\n\", length, used);",
                "  }",
                "  return 0;",
                "}", ""));
        Path executable = buildDir.resolve("inline_wqebbs");
        GccProgram.runCommand(List.of("nvcc", "-std=c++17", "-I", include.toString(), source.toString(), "-o",
                executable.toString()));
        return GccProgram.run(executable, "");
    }

    @Test
    void inlineWqesOfTwoAndMoreWqebbsAreCountedAsTheJavaEncoderCountsThem() throws Exception {
        ByteBuffer sq = ByteBuffer.allocate(RING_WQEBBS * WqeDescriptor.WQEBB_SIZE);
        byte[] payload = new byte[WqeDescriptor.MAX_INLINE_BYTES];
        String[] lines = deviceCounts().strip().split("\n");
        assertEquals(WqeDescriptor.MAX_INLINE_BYTES + 1, lines.length, "one line per length");
        for (String line : lines) {
            String[] parts = line.split(" ");
            int length = Integer.parseInt(parts[0]);
            int device = Integer.parseInt(parts[1]);
            int java = WqeEncoder.writeRdmaWriteInline(sq, RING_WQEBBS - 1, 0x123, WqeDescriptor.FM_CE_SE_CQ_UPDATE,
                    0x1000, 7, payload, 0, length);
            assertEquals(java, device, length + "-byte inline WRITE: WQEBBs mlx5.cuh returns (recorded in"
                    + " wqe_sizes) differ from the Java encoder's");
        }
        // The boundary the device API's own inline WQEs never cross: ctrl + raddr + 4-byte header + 28 bytes = 64.
        assertEquals("28 1", lines[28]);
        assertEquals("29 2", lines[29]);
        assertEquals("40 2", lines[40]);
        assertEquals("93 3", lines[93]);
    }
}

package io.gda4j.p2p;

import io.gda4j.mlx5.RequiresCompilers;
import io.gda4j.world.HeaderValues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code gda4j/core/copy.cuh}, the copy every direct put makes, built for the host with g++ ({@code copy_check.cpp})
 * and run over every size up to 80 bytes at every pair of offsets mod 32, and over longer sizes at a few offsets, by
 * 1, 2, 32 and 96 lanes: exactly the bytes asked for land and none around them change. Where the GPU tests need a
 * GPU, this holds the copy's head, vectors and tail pieces to their bytes on any machine with g++.
 */
@RequiresCompilers(tools = "g++")
class DirectCopyHostTest {
    @Test
    void everyCopyMovesExactlyItsBytes(@TempDir Path tmp) throws IOException, InterruptedException {
        Map<String, Long> v = HeaderValues.of("copy_check.cpp", tmp);
        assertEquals(0L, v.get("failures"), () -> v.get("failures") + " of " + v.get("cases") + " copies wrong; the"
                + " first: " + v.get("first_size") + " bytes from offset " + v.get("first_src_offset") + " to offset "
                + v.get("first_dst_offset") + " by " + v.get("first_lanes") + " lanes, byte " + v.get("first_byte")
                + " (negative: before the destination)");
        // 4 lane counts x (81 sizes x 32 x 32 offsets + 7 longer sizes x 4 x 5 offsets)
        assertEquals(4L * (81 * 32 * 32 + 7 * 4 * 5), v.get("cases"), "cases run");
    }
}

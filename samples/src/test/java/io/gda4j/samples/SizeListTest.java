package io.gda4j.samples;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class SizeListTest {
    @Test
    void listsRangesAndMixes() {
        assertEquals(List.of(8L, 64L, 4096L), SizeList.parse("8,64,4k", 1, 1L << 30));
        assertEquals(List.of(8L, 16L, 32L, 64L), SizeList.parse("8:64", 1, 1L << 30));
        assertEquals(List.of(8L, 16L, 64L, 1L << 20), SizeList.parse("8:16, 1m ,64", 1, 1L << 30));
        assertEquals(List.of(4096L, 8192L), SizeList.parse("4k:12k", 1, 1L << 30));
    }

    @Test
    void rejectsWhatCannotBeMeasured() {
        assertThrows(UsageException.class, () -> SizeList.parse("", 1, 100));
        assertThrows(UsageException.class, () -> SizeList.parse("64:8", 1, 100));
        assertThrows(UsageException.class, () -> SizeList.parse("0:8", 1, 100));
        assertThrows(UsageException.class, () -> SizeList.parse("200", 1, 100));
        assertThrows(UsageException.class, () -> SizeList.parse("8", 16, 100));
        assertThrows(UsageException.class, () -> SizeList.parse("x", 1, 100));
        assertThrows(UsageException.class, () -> SizeList.parse("8,,16", 1, 100), "an empty element");
        assertThrows(UsageException.class, () -> SizeList.parse("8,", 1, 100), "an empty element");
        assertThrows(UsageException.class, () -> SizeList.parse("8,8", 1, 100), "a repeat");
        // A size a range already holds is a repeat too, as the README promises of every list.
        UsageException e = assertThrows(UsageException.class, () -> SizeList.parse("8:1m,16", 1, 1L << 30));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("gives 16 B twice"), e.getMessage());
        assertThrows(UsageException.class, () -> SizeList.parse("4k:12k,8k", 1, 1L << 30));
    }

    @Test
    void latencyIterationsShrinkOnlyForLargeSizes() {
        assertEquals(10_000, LatencyCommand.scaledIterations(10_000, 0));
        assertEquals(10_000, LatencyCommand.scaledIterations(10_000, 4096));
        assertEquals(256, LatencyCommand.scaledIterations(10_000, 1 << 20));
        assertEquals(200, LatencyCommand.scaledIterations(10_000, 1 << 30));
    }

    @Test
    void bandwidthChunksSpreadOverBlocks() {
        assertEquals(1024, PutBandwidth.chunkFor(4096, 264));
        assertEquals(4096, PutBandwidth.chunkFor(1 << 20, 264));
        assertEquals(64 * 1024, PutBandwidth.chunkFor(256L << 20, 264));
        assertEquals(1, PutBandwidth.iterationsFor(1L << 30));
        assertEquals(10_000, PutBandwidth.iterationsFor(4096));
    }
}

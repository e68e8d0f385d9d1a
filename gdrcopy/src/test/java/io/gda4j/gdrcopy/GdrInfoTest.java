package io.gda4j.gdrcopy;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GdrInfoTest {

    private static ByteBuffer encode(int size, long va, long mappedSize, int pageSize, int flags, int mappingType) {
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.nativeOrder());
        b.putLong(GdrInfoDescriptor.VA_OFFSET, va);
        b.putLong(GdrInfoDescriptor.MAPPED_SIZE_OFFSET, mappedSize);
        b.putInt(GdrInfoDescriptor.PAGE_SIZE_OFFSET, pageSize);
        b.putLong(GdrInfoDescriptor.TM_CYCLES_OFFSET, 7);
        b.putInt(GdrInfoDescriptor.CYCLES_PER_MS_OFFSET, 9);
        b.putInt(GdrInfoDescriptor.FLAGS_OFFSET, flags);
        if (size >= GdrInfoDescriptor.SIZE) {
            b.putInt(GdrInfoDescriptor.MAPPING_TYPE_OFFSET, mappingType);
        }
        return b;
    }

    @Test
    void decodesV2() {
        GdrInfo info = GdrInfo.decodeV2(encode(GdrInfoDescriptor.SIZE, 0x7f0000010000L, 131072, 65536,
                GdrInfoDescriptor.flagsOf(true, true), GdrInfo.MappingType.WC.code()));
        assertEquals(0x7f0000010000L, info.va());
        assertEquals(131072, info.mappedSize());
        assertEquals(65536, info.pageSize());
        assertEquals(7, info.tmCycles());
        assertEquals(9, info.cyclesPerMs());
        assertTrue(info.mapped());
        assertTrue(info.wcMapping());
        assertEquals(GdrInfo.MappingType.WC, info.mappingType());
    }

    @Test
    void decodesV1DerivingTheMappingTypeLikeLibgdrapi() {
        assertEquals(GdrInfo.MappingType.WC, GdrInfo.decodeV1(
                encode(GdrInfoDescriptor.V1_SIZE, 1, 2, 3, GdrInfoDescriptor.flagsOf(true, true), 0)).mappingType());
        assertEquals(GdrInfo.MappingType.CACHING, GdrInfo.decodeV1(
                encode(GdrInfoDescriptor.V1_SIZE, 1, 2, 3, GdrInfoDescriptor.flagsOf(true, false), 0)).mappingType());
        GdrInfo unmapped = GdrInfo.decodeV1(encode(GdrInfoDescriptor.V1_SIZE, 1, 2, 3, 0, 0));
        assertFalse(unmapped.mapped());
        assertEquals(GdrInfo.MappingType.NONE, unmapped.mappingType());
    }

    @Test
    void unknownMappingTypeDoesNotThrow() {
        assertEquals(GdrInfo.MappingType.UNKNOWN, GdrInfo.MappingType.fromCode(4));
        assertEquals(GdrInfo.MappingType.UNKNOWN, GdrInfo.MappingType.fromCode(-1));
        for (GdrInfo.MappingType type : GdrInfo.MappingType.values()) {
            if (type != GdrInfo.MappingType.UNKNOWN) {
                assertEquals(type, GdrInfo.MappingType.fromCode(type.code()));
            }
        }
    }

    @Test
    void refusesAShortBuffer() {
        assertThrows(IllegalArgumentException.class, () -> GdrInfo.decodeV2(ByteBuffer.allocate(40)));
    }
}

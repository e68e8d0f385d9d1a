package io.gda4j.gdrcopy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * What gdr_get_info reports about a pinned buffer (see {@link GdrInfoDescriptor} for the bytes).
 *
 * @param va          GPU virtual address of the first pinned page (may be below the address that was pinned)
 * @param mappedSize  bytes pinned, whole GPU pages
 * @param pageSize    GPU page size reported by gdrdrv
 * @param tmCycles    deprecated by gdrcopy, kept for completeness
 * @param cyclesPerMs deprecated by gdrcopy, kept for completeness
 * @param mapped      whether a CPU mapping exists
 * @param wcMapping   whether that mapping is write-combining
 * @param mappingType the mapping's kind
 */
public record GdrInfo(long va, long mappedSize, int pageSize, long tmCycles, int cyclesPerMs, boolean mapped,
                      boolean wcMapping, MappingType mappingType) {

    /** {@code gdr_mapping_type_t}. */
    public enum MappingType {
        /** {@code GDR_MAPPING_TYPE_NONE}: not mapped. */
        NONE(0),
        /** {@code GDR_MAPPING_TYPE_WC}: write-combining (x86 BAR1); stores need a fence to leave the CPU. */
        WC(1),
        /** {@code GDR_MAPPING_TYPE_CACHING}: cached (POWER9 and coherent platforms). */
        CACHING(2),
        /** {@code GDR_MAPPING_TYPE_DEVICE}: device memory type (ARM64). */
        DEVICE(3),
        /** A value this binding does not know (a newer gdrcopy). */
        UNKNOWN(-1);

        private final int code;

        MappingType(int code) {
            this.code = code;
        }

        /** The C enum value. */
        public int code() {
            return code;
        }

        /** The constant for a C enum value; {@link #UNKNOWN} for a value this binding does not know. */
        public static MappingType fromCode(int code) {
            for (MappingType type : values()) {
                if (type.code == code && type != UNKNOWN) {
                    return type;
                }
            }
            return UNKNOWN;
        }
    }

    /** Decodes a {@code gdr_info_v2_t} ({@value GdrInfoDescriptor#SIZE} bytes). */
    public static GdrInfo decodeV2(ByteBuffer info) {
        ByteBuffer b = nativeOrdered(info, GdrInfoDescriptor.SIZE);
        int flags = GdrInfoDescriptor.flags(b);
        return new GdrInfo(GdrInfoDescriptor.va(b), GdrInfoDescriptor.mappedSize(b), GdrInfoDescriptor.pageSize(b),
                GdrInfoDescriptor.tmCycles(b), GdrInfoDescriptor.cyclesPerMs(b), GdrInfoDescriptor.isMapped(flags),
                GdrInfoDescriptor.isWcMapping(flags), MappingType.fromCode(GdrInfoDescriptor.mappingType(b)));
    }

    /**
     * Decodes a {@code gdr_info_v1_t} ({@value GdrInfoDescriptor#V1_SIZE} bytes, no mapping type), deriving the
     * mapping type from the two bits the way libgdrapi does for old drivers.
     */
    public static GdrInfo decodeV1(ByteBuffer info) {
        ByteBuffer b = nativeOrdered(info, GdrInfoDescriptor.V1_SIZE);
        int flags = GdrInfoDescriptor.flags(b);
        boolean mapped = GdrInfoDescriptor.isMapped(flags);
        boolean wc = GdrInfoDescriptor.isWcMapping(flags);
        MappingType type = mapped ? (wc ? MappingType.WC : MappingType.CACHING) : MappingType.NONE;
        return new GdrInfo(GdrInfoDescriptor.va(b), GdrInfoDescriptor.mappedSize(b), GdrInfoDescriptor.pageSize(b),
                GdrInfoDescriptor.tmCycles(b), GdrInfoDescriptor.cyclesPerMs(b), mapped, wc, type);
    }

    private static ByteBuffer nativeOrdered(ByteBuffer info, int needed) {
        if (info.capacity() < needed) {
            throw new IllegalArgumentException("gdr_info needs " + needed + " bytes, the buffer has " + info.capacity());
        }
        return info.duplicate().order(ByteOrder.nativeOrder());
    }

    @Override
    public String toString() {
        return String.format("GdrInfo[va=0x%x, mappedSize=%d, pageSize=%d, mapped=%b, wcMapping=%b, mappingType=%s]",
                va, mappedSize, pageSize, mapped, wcMapping, mappingType);
    }
}

package io.gda4j.gdrcopy;

import java.nio.ByteBuffer;

/**
 * Layout of {@code gdr_info_t} from gdrapi.h: a typedef of {@code gdr_info_v2_t} since gdrcopy 2.4, filled by
 * {@code gdr_get_info_v2}. 48 bytes in native byte order (LP64 Linux, the only platform gdrcopy supports):
 *
 * <pre>
 *   0                                                              8
 *   +--------------------------------------------------------------+
 *   | va             uint64  GPU virtual address of the first page |
 *   +--------------------------------------------------------------+ 8
 *   | mapped_size    uint64  bytes pinned (whole GPU pages)        |
 *   +------------------------------+-------------------------------+ 16
 *   | page_size      uint32        | (padding)                     |
 *   +------------------------------+-------------------------------+ 24
 *   | tm_cycles      uint64  (deprecated)                          |
 *   +------------------------------+-------------------------------+ 32
 *   | cycles_per_ms  uint32        | bit word      unsigned        |
 *   |   (deprecated)               |   bit 0 mapped, bit 1 wc_mapping
 *   +------------------------------+-------------------------------+ 40
 *   | mapping_type   uint32 enum   | (padding)                     |
 *   |   (gdr_mapping_type_t)       |                               |
 *   +------------------------------+-------------------------------+ 48
 * </pre>
 *
 * The older {@code gdr_info_v1_t}, filled by the exported symbol {@code gdr_get_info} (gdrcopy 2.0 to 2.3, and
 * kept for compatibility since), is the first {@value #V1_SIZE} bytes of the same layout without
 * {@code mapping_type}. Offsets are checked against a C compiler in {@code GdrInfoDescriptorLayoutTest}.
 */
public final class GdrInfoDescriptor {

    /** {@code sizeof(gdr_info_v2_t)}. */
    public static final int SIZE = 48;
    /** {@code sizeof(gdr_info_v1_t)}: the layout before gdrcopy 2.4, without {@code mapping_type}. */
    public static final int V1_SIZE = 40;

    public static final int VA_OFFSET = 0;
    public static final int MAPPED_SIZE_OFFSET = 8;
    public static final int PAGE_SIZE_OFFSET = 16;
    public static final int TM_CYCLES_OFFSET = 24;
    public static final int CYCLES_PER_MS_OFFSET = 32;
    /** The 32-bit word that holds the {@code mapped} and {@code wc_mapping} bit-fields. */
    public static final int FLAGS_OFFSET = 36;
    public static final int MAPPING_TYPE_OFFSET = 40;

    /** Bit of {@code mapped} in the word at {@link #FLAGS_OFFSET} (GCC allocates bit-fields from bit 0 up). */
    public static final int MAPPED_BIT = 0;
    /** Bit of {@code wc_mapping} in the word at {@link #FLAGS_OFFSET}. */
    public static final int WC_MAPPING_BIT = 1;

    private GdrInfoDescriptor() {
    }

    public static long va(ByteBuffer info) {
        return info.getLong(VA_OFFSET);
    }

    public static long mappedSize(ByteBuffer info) {
        return info.getLong(MAPPED_SIZE_OFFSET);
    }

    public static int pageSize(ByteBuffer info) {
        return info.getInt(PAGE_SIZE_OFFSET);
    }

    public static long tmCycles(ByteBuffer info) {
        return info.getLong(TM_CYCLES_OFFSET);
    }

    public static int cyclesPerMs(ByteBuffer info) {
        return info.getInt(CYCLES_PER_MS_OFFSET);
    }

    /** The whole bit-field word; see {@link #isMapped(int)} and {@link #isWcMapping(int)}. */
    public static int flags(ByteBuffer info) {
        return info.getInt(FLAGS_OFFSET);
    }

    /** Only present in the v2 layout. */
    public static int mappingType(ByteBuffer info) {
        return info.getInt(MAPPING_TYPE_OFFSET);
    }

    public static boolean isMapped(int flags) {
        return (flags >>> MAPPED_BIT & 1) != 0;
    }

    public static boolean isWcMapping(int flags) {
        return (flags >>> WC_MAPPING_BIT & 1) != 0;
    }

    /** The bit-field word with the given bits set, as the C compiler would store it. */
    public static int flagsOf(boolean mapped, boolean wcMapping) {
        return (mapped ? 1 << MAPPED_BIT : 0) | (wcMapping ? 1 << WC_MAPPING_BIT : 0);
    }
}

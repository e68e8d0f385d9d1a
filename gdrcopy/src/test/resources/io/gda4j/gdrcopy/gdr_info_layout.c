/*
 * Prints the layout of gdrcopy's gdr_info_t for GdrInfoDescriptorLayoutTest, one "name value" per line.
 *
 * gdrapi.h is not installed on the build machines, so the declarations below are copied from it
 * (NVIDIA/gdrcopy, include/gdrapi.h, gdrcopy 2.5: GPU_PAGE_SHIFT, gdr_mapping_type_t, gdr_info_v2_t) and, for the
 * v1 layout, from src/gdrapi.c (gdr_info_v1_t, the struct the exported gdr_get_info symbol fills).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- copied from gdrapi.h ---- */
#define GPU_PAGE_SHIFT   16
#define GPU_PAGE_SIZE    (1UL << GPU_PAGE_SHIFT)

typedef enum gdr_mapping_type {
    GDR_MAPPING_TYPE_NONE = 0,
    GDR_MAPPING_TYPE_WC = 1,
    GDR_MAPPING_TYPE_CACHING = 2,
    GDR_MAPPING_TYPE_DEVICE = 3
} gdr_mapping_type_t;

typedef struct gdr_info_v2 {
    uint64_t va;
    uint64_t mapped_size;
    uint32_t page_size;
    // tm_cycles and cycles_per_ms are deprecated and will be removed in future.
    uint64_t tm_cycles;
    uint32_t cycles_per_ms;
    unsigned mapped:1;
    unsigned wc_mapping:1;
    gdr_mapping_type_t mapping_type;
} gdr_info_v2_t;
typedef gdr_info_v2_t gdr_info_t;

typedef struct gdr_mh_s {
  unsigned long h;
} gdr_mh_t;
/* ---- copied from src/gdrapi.c ---- */
typedef struct gdr_info_v1 {
    uint64_t va;
    uint64_t mapped_size;
    uint32_t page_size;
    // tm_cycles and cycles_per_ms are deprecated and will be removed in future.
    uint64_t tm_cycles;
    uint32_t cycles_per_ms;
    unsigned mapped:1;
    unsigned wc_mapping:1;
} gdr_info_v1_t;
/* ---- end of copies ---- */

/* The first byte that is not zero (to find where a bit-field lives), and the 32-bit word at an offset. */
static int first_nonzero_byte(const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        if (b[i] != 0) return (int) i;
    }
    return -1;
}

static uint32_t word_at(const void *p, size_t offset) {
    uint32_t w;
    memcpy(&w, (const unsigned char *) p + offset, sizeof w);
    return w;
}

int main(void) {
    gdr_info_t info;

    printf("sizeof_gdr_info_t %zu\n", sizeof(gdr_info_t));
    printf("sizeof_gdr_info_v1_t %zu\n", sizeof(gdr_info_v1_t));
    printf("sizeof_gdr_mh_t %zu\n", sizeof(gdr_mh_t));
    printf("gpu_page_size %lu\n", GPU_PAGE_SIZE);
    printf("offsetof_va %zu\n", offsetof(gdr_info_t, va));
    printf("offsetof_mapped_size %zu\n", offsetof(gdr_info_t, mapped_size));
    printf("offsetof_page_size %zu\n", offsetof(gdr_info_t, page_size));
    printf("offsetof_tm_cycles %zu\n", offsetof(gdr_info_t, tm_cycles));
    printf("offsetof_cycles_per_ms %zu\n", offsetof(gdr_info_t, cycles_per_ms));
    printf("offsetof_mapping_type %zu\n", offsetof(gdr_info_t, mapping_type));
    printf("v1_offsetof_cycles_per_ms %zu\n", offsetof(gdr_info_v1_t, cycles_per_ms));

    /* bit-fields have no offsetof: set each alone and see which byte and bit change */
    memset(&info, 0, sizeof info);
    info.mapped = 1;
    int flags_offset = first_nonzero_byte(&info, sizeof info) & ~3;
    printf("flags_offset %d\n", flags_offset);
    printf("flags_word_mapped %u\n", word_at(&info, (size_t) flags_offset));
    memset(&info, 0, sizeof info);
    info.wc_mapping = 1;
    printf("flags_offset_wc %d\n", first_nonzero_byte(&info, sizeof info) & ~3);
    printf("flags_word_wc_mapping %u\n", word_at(&info, (size_t) flags_offset));

    printf("mapping_type_none %d\n", GDR_MAPPING_TYPE_NONE);
    printf("mapping_type_wc %d\n", GDR_MAPPING_TYPE_WC);
    printf("mapping_type_caching %d\n", GDR_MAPPING_TYPE_CACHING);
    printf("mapping_type_device %d\n", GDR_MAPPING_TYPE_DEVICE);
    printf("sizeof_mapping_type %zu\n", sizeof(gdr_mapping_type_t));
    return 0;
}

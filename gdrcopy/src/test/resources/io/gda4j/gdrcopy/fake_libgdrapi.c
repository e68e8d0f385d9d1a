/*
 * A stand-in for libgdrapi.so.2 over host memory, for FakeLibgdrapiTest: same exported symbols and C signatures
 * as NVIDIA/gdrcopy's include/gdrapi.h (2.5), so the JNA binding's types, the by-value gdr_mh_t and the
 * out-parameters are exercised on a machine without gdrcopy. "Pinning" records the range; "mapping" hands out
 * zeroed host memory; every call is appended to a log the test reads back to check the order of close calls.
 * Built with -DFAKE_NO_INFO_V2 it lacks gdr_get_info_v2, like gdrcopy 2.0 to 2.3.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_PAGE_SHIFT   16
#define GPU_PAGE_SIZE    (1UL << GPU_PAGE_SHIFT)
#define GPU_PAGE_OFFSET  (GPU_PAGE_SIZE-1)
#define GPU_PAGE_MASK    (~GPU_PAGE_OFFSET)

typedef struct gdr { int open; } *gdr_t;
typedef struct gdr_mh_s { unsigned long h; } gdr_mh_t;
typedef enum gdr_mapping_type {
    GDR_MAPPING_TYPE_NONE = 0, GDR_MAPPING_TYPE_WC = 1, GDR_MAPPING_TYPE_CACHING = 2, GDR_MAPPING_TYPE_DEVICE = 3
} gdr_mapping_type_t;
typedef struct gdr_info_v2 {
    uint64_t va; uint64_t mapped_size; uint32_t page_size; uint64_t tm_cycles; uint32_t cycles_per_ms;
    unsigned mapped:1; unsigned wc_mapping:1; gdr_mapping_type_t mapping_type;
} gdr_info_v2_t;
typedef struct gdr_info_v1 {
    uint64_t va; uint64_t mapped_size; uint32_t page_size; uint64_t tm_cycles; uint32_t cycles_per_ms;
    unsigned mapped:1; unsigned wc_mapping:1;
} gdr_info_v1_t;

/* the address the test pins to provoke a failure */
#define FAKE_BAD_ADDRESS 0xbad0000UL

struct memh { unsigned long addr, va, mapped_size; void *host; int id; };

static char call_log[8192];
static int next_id = 1;
static int fail_next_open = 0;
static int live_pins = 0;

static void log_call(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_call(const char *fmt, ...) {
    size_t used = strlen(call_log);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call_log + used, sizeof call_log - used, fmt, ap);
    va_end(ap);
    used = strlen(call_log);
    if (used + 1 < sizeof call_log) { call_log[used] = ' '; call_log[used + 1] = 0; }
}

const char *fake_gdr_log(void) { return call_log; }
void fake_gdr_fail_next_open(void) { fail_next_open = 1; }

gdr_t gdr_open(void) {
    if (fail_next_open) { fail_next_open = 0; log_call("open-failed"); return NULL; }
    gdr_t g = calloc(1, sizeof *g);
    g->open = 1;
    log_call("open");
    return g;
}

int gdr_close(gdr_t g) {
    if (live_pins) log_call("close-with-%d-pins", live_pins); else log_call("close");
    g->open = 0;
    free(g);
    return 0;
}

int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size, uint64_t p2p_token, uint32_t va_space,
                   gdr_mh_t *handle) {
    if (!g->open || p2p_token != 0 || va_space != 0) return EINVAL;
    if (addr == FAKE_BAD_ADDRESS) { log_call("pin-failed"); return EINVAL; }
    struct memh *mh = calloc(1, sizeof *mh);
    mh->addr = addr;
    mh->va = addr & GPU_PAGE_MASK;
    mh->mapped_size = ((addr + size + GPU_PAGE_OFFSET) & GPU_PAGE_MASK) - mh->va;
    mh->id = next_id++;
    live_pins++;
    handle->h = (unsigned long) mh;
    log_call("pin%d:%lu", mh->id, (unsigned long) size);
    return 0;
}

int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle) {
    struct memh *mh = (struct memh *) handle.h;
    (void) g;
    log_call("unpin%d", mh->id);
    if (mh->host) { log_call("unpin%d-while-mapped", mh->id); }
    free(mh);
    live_pins--;
    return 0;
}

int gdr_get_callback_flag(gdr_t g, gdr_mh_t handle, int *flag) { (void) g; (void) handle; *flag = 0; return 0; }

#ifndef FAKE_NO_INFO_V2
int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, gdr_info_v2_t *info) {
    struct memh *mh = (struct memh *) handle.h;
    (void) g;
    info->va = mh->va; info->mapped_size = mh->mapped_size; info->page_size = GPU_PAGE_SIZE;
    info->tm_cycles = 0; info->cycles_per_ms = 0;
    info->mapped = mh->host != NULL; info->wc_mapping = mh->host != NULL;
    info->mapping_type = mh->host != NULL ? GDR_MAPPING_TYPE_WC : GDR_MAPPING_TYPE_NONE;
    return 0;
}
#endif

int gdr_get_info(gdr_t g, gdr_mh_t handle, gdr_info_v1_t *info) {
    struct memh *mh = (struct memh *) handle.h;
    (void) g;
    info->va = mh->va; info->mapped_size = mh->mapped_size; info->page_size = GPU_PAGE_SIZE;
    info->tm_cycles = 0; info->cycles_per_ms = 0;
    info->mapped = mh->host != NULL; info->wc_mapping = mh->host != NULL;
    return 0;
}

int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size) {
    struct memh *mh = (struct memh *) handle.h;
    (void) g;
    if (mh->host) return EAGAIN;
    if (size > mh->mapped_size) return EINVAL;
    mh->host = aligned_alloc(4096, (size + 4095) & ~4095UL);
    memset(mh->host, 0, size);
    *va = mh->host;
    log_call("map%d:%lu", mh->id, (unsigned long) size);
    return 0;
}

int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size) {
    struct memh *mh = (struct memh *) handle.h;
    (void) g; (void) size;
    if (!mh->host || va != mh->host) return EINVAL;
    free(mh->host);
    mh->host = NULL;
    log_call("unmap%d", mh->id);
    return 0;
}

int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size) {
    struct memh *mh = (struct memh *) handle.h;
    if (!mh->host) return EINVAL;
    memcpy(map_d_ptr, h_ptr, size);
    return 0;
}

int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size) {
    struct memh *mh = (struct memh *) handle.h;
    if (!mh->host) return EINVAL;
    memcpy(h_ptr, map_d_ptr, size);
    return 0;
}

void gdr_runtime_get_version(int *major, int *minor) { *major = 2; *minor = 5; }

int gdr_driver_get_version(gdr_t g, int *major, int *minor) { (void) g; *major = 2; *minor = 4; return 0; }

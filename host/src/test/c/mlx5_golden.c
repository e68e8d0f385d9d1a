/*
 * Golden bytes for gda4j's mlx5 encoders, written with rdma-core's own helpers and structs.
 *
 * Built by Mlx5GoldenTest with
 *   gcc -std=c11 -Wall -Werror -D<J_Class_FIELD>=<value>... mlx5_golden.c -o mlx5_golden
 * where each J_ macro is a Java constant. The _Static_asserts below compare them with <infiniband/mlx5dv.h> at
 * compile time, so a wrong Java offset fails the build and gcc names the field.
 *
 *   mlx5_golden checked   prints the Java constants checked here, one a line (the test wants them all checked)
 *   mlx5_golden cases     reads golden-cases.txt on stdin, prints "<name> <hex bytes> [key=value...]" per case
 *
 * Only header-inline code is used (no libmlx5 at link or run time), so it runs without any RDMA device.
 */
#define _DEFAULT_SOURCE
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

/* Java constant name, then the header's expression for the same fact. */
#define LAYOUT_CHECKS(X)                                                                          \
    X(WqeDescriptor_WQEBB_SIZE, MLX5_SEND_WQE_BB)                                                 \
    X(WqeDescriptor_WQEBB_SHIFT, MLX5_SEND_WQE_SHIFT)                                             \
    X(WqeDescriptor_CTRL_SIZE, sizeof(struct mlx5_wqe_ctrl_seg))                                  \
    X(WqeDescriptor_CTRL_OPMOD_IDX_OPCODE_OFFSET, offsetof(struct mlx5_wqe_ctrl_seg, opmod_idx_opcode)) \
    X(WqeDescriptor_CTRL_QPN_DS_OFFSET, offsetof(struct mlx5_wqe_ctrl_seg, qpn_ds))               \
    X(WqeDescriptor_CTRL_SIGNATURE_OFFSET, offsetof(struct mlx5_wqe_ctrl_seg, signature))         \
    X(WqeDescriptor_CTRL_DCI_STREAM_CHANNEL_ID_OFFSET,                                            \
      offsetof(struct mlx5_wqe_ctrl_seg, dci_stream_channel_id))                                  \
    X(WqeDescriptor_CTRL_FM_CE_SE_OFFSET, offsetof(struct mlx5_wqe_ctrl_seg, fm_ce_se))           \
    X(WqeDescriptor_CTRL_IMM_OFFSET, offsetof(struct mlx5_wqe_ctrl_seg, imm))                     \
    X(WqeDescriptor_FM_CE_SE_SOLICITED, MLX5_WQE_CTRL_SOLICITED)                                  \
    X(WqeDescriptor_FM_CE_SE_CQ_UPDATE, MLX5_WQE_CTRL_CQ_UPDATE)                                  \
    X(WqeDescriptor_FM_CE_SE_SMALL_FENCE, MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE)                    \
    X(WqeDescriptor_FM_CE_SE_FENCE, MLX5_WQE_CTRL_FENCE)                                          \
    X(WqeDescriptor_RADDR_SIZE, sizeof(struct mlx5_wqe_raddr_seg))                                \
    X(WqeDescriptor_RADDR_RADDR_OFFSET, offsetof(struct mlx5_wqe_raddr_seg, raddr))               \
    X(WqeDescriptor_RADDR_RKEY_OFFSET, offsetof(struct mlx5_wqe_raddr_seg, rkey))                 \
    X(WqeDescriptor_RADDR_RESERVED_OFFSET, offsetof(struct mlx5_wqe_raddr_seg, reserved))         \
    X(WqeDescriptor_DATA_SIZE, sizeof(struct mlx5_wqe_data_seg))                                  \
    X(WqeDescriptor_DATA_BYTE_COUNT_OFFSET, offsetof(struct mlx5_wqe_data_seg, byte_count))       \
    X(WqeDescriptor_DATA_LKEY_OFFSET, offsetof(struct mlx5_wqe_data_seg, lkey))                   \
    X(WqeDescriptor_DATA_ADDR_OFFSET, offsetof(struct mlx5_wqe_data_seg, addr))                   \
    X(WqeDescriptor_INLINE_HEADER_SIZE, sizeof(struct mlx5_wqe_inl_data_seg))                     \
    X(WqeDescriptor_INLINE_BYTE_COUNT_OFFSET, offsetof(struct mlx5_wqe_inl_data_seg, byte_count)) \
    X(WqeDescriptor_INLINE_SEG, MLX5_INLINE_SEG)                                                  \
    X(WqeDescriptor_ATOMIC_SIZE, sizeof(struct mlx5_wqe_atomic_seg))                              \
    X(WqeDescriptor_ATOMIC_SWAP_ADD_OFFSET, offsetof(struct mlx5_wqe_atomic_seg, swap_add))       \
    X(WqeDescriptor_ATOMIC_COMPARE_OFFSET, offsetof(struct mlx5_wqe_atomic_seg, compare))         \
    X(Mlx5Opcode_NOP, MLX5_OPCODE_NOP)                                                            \
    X(Mlx5Opcode_RDMA_WRITE, MLX5_OPCODE_RDMA_WRITE)                                              \
    X(Mlx5Opcode_RDMA_WRITE_IMM, MLX5_OPCODE_RDMA_WRITE_IMM)                                      \
    X(Mlx5Opcode_SEND, MLX5_OPCODE_SEND)                                                          \
    X(Mlx5Opcode_SEND_IMM, MLX5_OPCODE_SEND_IMM)                                                  \
    X(Mlx5Opcode_RDMA_READ, MLX5_OPCODE_RDMA_READ)                                                \
    X(Mlx5Opcode_ATOMIC_CS, MLX5_OPCODE_ATOMIC_CS)                                                \
    X(Mlx5Opcode_ATOMIC_FA, MLX5_OPCODE_ATOMIC_FA)                                                \
    X(Mlx5Opcode_ATOMIC_MASKED_CS, MLX5_OPCODE_ATOMIC_MASKED_CS)                                  \
    X(Mlx5Opcode_ATOMIC_MASKED_FA, MLX5_OPCODE_ATOMIC_MASKED_FA)                                  \
    X(CqeDescriptor_CQE_SIZE, sizeof(struct mlx5_cqe64))                                          \
    X(CqeDescriptor_CQE_SIZE, sizeof(struct mlx5_err_cqe))                                        \
    X(CqeDescriptor_SRQN_UIDX_OFFSET, offsetof(struct mlx5_cqe64, srqn_uidx))                     \
    X(CqeDescriptor_IMM_INVAL_PKEY_OFFSET, offsetof(struct mlx5_cqe64, imm_inval_pkey))           \
    X(CqeDescriptor_BYTE_CNT_OFFSET, offsetof(struct mlx5_cqe64, byte_cnt))                       \
    X(CqeDescriptor_TIMESTAMP_OFFSET, offsetof(struct mlx5_cqe64, timestamp))                     \
    X(CqeDescriptor_VENDOR_ERR_SYND_OFFSET, offsetof(struct mlx5_err_cqe, vendor_err_synd))       \
    X(CqeDescriptor_SYNDROME_OFFSET, offsetof(struct mlx5_err_cqe, syndrome))                     \
    X(CqeDescriptor_SOP_DROP_QPN_OFFSET, offsetof(struct mlx5_cqe64, sop_drop_qpn))               \
    X(CqeDescriptor_S_WQE_OPCODE_OFFSET, offsetof(struct mlx5_err_cqe, s_wqe_opcode_qpn))         \
    X(CqeDescriptor_TAIL_OFFSET, offsetof(struct mlx5_cqe64, sop_drop_qpn))                       \
    X(CqeDescriptor_WQE_COUNTER_OFFSET, offsetof(struct mlx5_cqe64, wqe_counter))                 \
    X(CqeDescriptor_WQE_COUNTER_OFFSET, offsetof(struct mlx5_err_cqe, wqe_counter))               \
    X(CqeDescriptor_SIGNATURE_OFFSET, offsetof(struct mlx5_cqe64, signature))                     \
    X(CqeDescriptor_SIGNATURE_OFFSET, offsetof(struct mlx5_err_cqe, signature))                   \
    X(CqeDescriptor_OP_OWN_OFFSET, offsetof(struct mlx5_cqe64, op_own))                           \
    X(CqeDescriptor_OP_OWN_OFFSET, offsetof(struct mlx5_err_cqe, op_own))                         \
    X(CqeDescriptor_OWNER_MASK, MLX5_CQE_OWNER_MASK)                                              \
    X(CqeOpcode_REQ, MLX5_CQE_REQ)                                                                \
    X(CqeOpcode_RESP_WR_IMM, MLX5_CQE_RESP_WR_IMM)                                                \
    X(CqeOpcode_RESP_SEND, MLX5_CQE_RESP_SEND)                                                    \
    X(CqeOpcode_RESP_SEND_IMM, MLX5_CQE_RESP_SEND_IMM)                                            \
    X(CqeOpcode_RESP_SEND_INV, MLX5_CQE_RESP_SEND_INV)                                            \
    X(CqeOpcode_RESIZE_CQ, MLX5_CQE_RESIZE_CQ)                                                    \
    X(CqeOpcode_NO_PACKET, MLX5_CQE_NO_PACKET)                                                    \
    X(CqeOpcode_SIG_ERR, MLX5_CQE_SIG_ERR)                                                        \
    X(CqeOpcode_REQ_ERR, MLX5_CQE_REQ_ERR)                                                        \
    X(CqeOpcode_RESP_ERR, MLX5_CQE_RESP_ERR)                                                      \
    X(CqeOpcode_INVALID, MLX5_CQE_INVALID)                                                        \
    X(CqeSyndrome_LOCAL_LENGTH, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR)                               \
    X(CqeSyndrome_LOCAL_QP_OP, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR)                                 \
    X(CqeSyndrome_LOCAL_PROT, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR)                                   \
    X(CqeSyndrome_WR_FLUSH, MLX5_CQE_SYNDROME_WR_FLUSH_ERR)                                       \
    X(CqeSyndrome_MW_BIND, MLX5_CQE_SYNDROME_MW_BIND_ERR)                                         \
    X(CqeSyndrome_BAD_RESP, MLX5_CQE_SYNDROME_BAD_RESP_ERR)                                       \
    X(CqeSyndrome_LOCAL_ACCESS, MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR)                               \
    X(CqeSyndrome_REMOTE_INVAL_REQ, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR)                       \
    X(CqeSyndrome_REMOTE_ACCESS, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR)                             \
    X(CqeSyndrome_REMOTE_OP, MLX5_CQE_SYNDROME_REMOTE_OP_ERR)                                     \
    X(CqeSyndrome_TRANSPORT_RETRY_EXC, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR)                 \
    X(CqeSyndrome_RNR_RETRY_EXC, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR)                             \
    X(CqeSyndrome_REMOTE_ABORTED, MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR)                           \
    X(DoorbellRecordDescriptor_RCV_DBR, MLX5_RCV_DBR)                                             \
    X(DoorbellRecordDescriptor_SND_DBR, MLX5_SND_DBR)

#define STATIC_CHECK(jname, expr) \
    _Static_assert((expr) == (J_##jname), "Java constant " #jname " differs from mlx5dv.h's " #expr);
LAYOUT_CHECKS(STATIC_CHECK)

#define NAME_OF(jname, expr) #jname,
static const char *const checked_names[] = {LAYOUT_CHECKS(NAME_OF)};

/* ---- the case table: one line of golden-cases.txt ---- */

#define MAX_FIELDS 16
#define MAX_WQE_BYTES 1024 /* 16 WQEBBs: the largest WQE ds (6 bits) allows */

struct fields {
    const char *kind;
    const char *name;
    int count;
    char *key[MAX_FIELDS];
    char *value[MAX_FIELDS];
};

static void die(const struct fields *f, const char *what, const char *key)
{
    fprintf(stderr, "mlx5_golden: case %s (%s): %s %s\n", f->name ? f->name : "?", f->kind, what, key);
    exit(2);
}

static const char *text(const struct fields *f, const char *key)
{
    for (int i = 0; i < f->count; i++)
        if (strcmp(f->key[i], key) == 0)
            return f->value[i];
    die(f, "missing key", key);
    return NULL;
}

static uint64_t number(const struct fields *f, const char *key)
{
    const char *value = text(f, key);
    char *end;
    errno = 0;
    uint64_t n = strtoull(value, &end, 0);
    if (errno != 0 || *end != '\0')
        die(f, "not a number:", key);
    return n;
}

static size_t payload(const struct fields *f, uint8_t *out, size_t max)
{
    const char *value = text(f, "payload");
    if (strcmp(value, "-") == 0)
        return 0;
    if (strncmp(value, "pattern:", 8) == 0) {
        size_t n = strtoul(value + 8, NULL, 10);
        if (n > max)
            die(f, "payload too long", value);
        for (size_t i = 0; i < n; i++)
            out[i] = (uint8_t)(i * 37 + 11);
        return n;
    }
    size_t n = strlen(value) / 2;
    if (n > max || strlen(value) % 2 != 0)
        die(f, "bad hex payload", value);
    for (size_t i = 0; i < n; i++) {
        unsigned int byte;
        if (sscanf(value + 2 * i, "%2x", &byte) != 1)
            die(f, "bad hex payload", value);
        out[i] = (uint8_t)byte;
    }
    return n;
}

static void print_hex(const char *name, const void *bytes, size_t n)
{
    printf("%s ", name);
    for (size_t i = 0; i < n; i++)
        printf("%02x", ((const uint8_t *)bytes)[i]);
}

/* ctrl segment exactly as rdma-core fills it; pi is uint16_t there, which is the 16-bit wrap. */
static void ctrl(void *wqe, const struct fields *f, uint8_t opcode, uint8_t ds, uint32_t imm_be)
{
    mlx5dv_set_ctrl_seg((struct mlx5_wqe_ctrl_seg *)wqe, (uint16_t)number(f, "wqe_index"), opcode, 0,
                        (uint32_t)number(f, "qpn"), (uint8_t)number(f, "fm_ce_se"), ds, 0, imm_be);
}

static void *raddr(void *at, const struct fields *f)
{
    struct mlx5_wqe_raddr_seg *seg = at;
    seg->raddr = htobe64(number(f, "raddr"));
    seg->rkey = htobe32((uint32_t)number(f, "rkey"));
    seg->reserved = 0;
    return seg + 1;
}

static size_t rdma(uint8_t *wqe, const struct fields *f, uint8_t opcode, uint32_t imm_be)
{
    size_t size = sizeof(struct mlx5_wqe_ctrl_seg) + sizeof(struct mlx5_wqe_raddr_seg) +
                  sizeof(struct mlx5_wqe_data_seg);
    ctrl(wqe, f, opcode, (uint8_t)(size / 16), imm_be);
    struct mlx5_wqe_data_seg *data = raddr(wqe + sizeof(struct mlx5_wqe_ctrl_seg), f);
    mlx5dv_set_data_seg(data, (uint32_t)number(f, "byte_count"), (uint32_t)number(f, "lkey"),
                        (uintptr_t)number(f, "addr"));
    return size;
}

static size_t write_inline(uint8_t *wqe, const struct fields *f)
{
    uint8_t bytes[MAX_WQE_BYTES];
    size_t length = payload(f, bytes, sizeof(bytes));
    /* As the mlx5 provider sizes it: header plus payload, rounded up to whole 16-byte segments. */
    size_t inline_size = (sizeof(struct mlx5_wqe_inl_data_seg) + length + 15) & ~(size_t)15;
    size_t size = sizeof(struct mlx5_wqe_ctrl_seg) + sizeof(struct mlx5_wqe_raddr_seg) + inline_size;
    if (size > MAX_WQE_BYTES || size / 16 > 63)
        die(f, "inline payload does not fit in a WQE", "payload");
    ctrl(wqe, f, MLX5_OPCODE_RDMA_WRITE, (uint8_t)(size / 16), 0);
    struct mlx5_wqe_inl_data_seg *inl = raddr(wqe + sizeof(struct mlx5_wqe_ctrl_seg), f);
    inl->byte_count = htobe32((uint32_t)length | MLX5_INLINE_SEG);
    memcpy(inl + 1, bytes, length);
    return size;
}

/* ctrl | raddr | atomic | data: the order the mlx5 provider writes for IBV_WR_ATOMIC_*. */
static size_t atomic(uint8_t *wqe, const struct fields *f, uint8_t opcode)
{
    size_t size = sizeof(struct mlx5_wqe_ctrl_seg) + sizeof(struct mlx5_wqe_raddr_seg) +
                  sizeof(struct mlx5_wqe_atomic_seg) + sizeof(struct mlx5_wqe_data_seg);
    ctrl(wqe, f, opcode, (uint8_t)(size / 16), 0);
    struct mlx5_wqe_atomic_seg *seg = raddr(wqe + sizeof(struct mlx5_wqe_ctrl_seg), f);
    seg->swap_add = htobe64(number(f, "swap_add"));
    seg->compare = opcode == MLX5_OPCODE_ATOMIC_CS ? htobe64(number(f, "compare")) : 0;
    mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(seg + 1), sizeof(uint64_t), (uint32_t)number(f, "lkey"),
                        (uintptr_t)number(f, "addr"));
    return size;
}

/* Owner bit of a fresh CQE at consumer counter n, as the provider's get_sw_cqe expects it. */
static uint8_t owner_bit(const struct fields *f)
{
    return !!(number(f, "cqe_index") & number(f, "cqe_count"));
}

static void print_cqe(const struct fields *f, struct mlx5_cqe64 *cqe)
{
    print_hex(f->name, cqe, sizeof(*cqe));
    printf(" opcode=%u owner=%u\n", mlx5dv_get_cqe_opcode(cqe), mlx5dv_get_cqe_owner(cqe));
}

static void run_case(struct fields *f)
{
    _Alignas(64) uint8_t wqe[MAX_WQE_BYTES];
    memset(wqe, 0, sizeof(wqe));
    size_t size;

    if (strcmp(f->kind, "nop") == 0) {
        size = sizeof(struct mlx5_wqe_ctrl_seg);
        ctrl(wqe, f, MLX5_OPCODE_NOP, (uint8_t)(size / 16), 0);
    } else if (strcmp(f->kind, "write") == 0) {
        size = rdma(wqe, f, MLX5_OPCODE_RDMA_WRITE, 0);
    } else if (strcmp(f->kind, "write_imm") == 0) {
        size = rdma(wqe, f, MLX5_OPCODE_RDMA_WRITE_IMM, htobe32((uint32_t)number(f, "imm")));
    } else if (strcmp(f->kind, "read") == 0) {
        size = rdma(wqe, f, MLX5_OPCODE_RDMA_READ, 0);
    } else if (strcmp(f->kind, "write_inline") == 0) {
        size = write_inline(wqe, f);
    } else if (strcmp(f->kind, "fetch_add") == 0) {
        size = atomic(wqe, f, MLX5_OPCODE_ATOMIC_FA);
    } else if (strcmp(f->kind, "compare_swap") == 0) {
        size = atomic(wqe, f, MLX5_OPCODE_ATOMIC_CS);
    } else if (strcmp(f->kind, "dbr") == 0) {
        /* The provider's post_send epilogue: qp->db[MLX5_SND_DBR] = htobe32(qp->sq.cur_post & 0xffff). */
        __be32 dbrec[2] = {0, 0};
        dbrec[MLX5_SND_DBR] = htobe32((uint32_t)(number(f, "pi") & 0xffff));
        print_hex(f->name, dbrec, sizeof(dbrec));
        printf("\n");
        return;
    } else if (strcmp(f->kind, "doorbell") == 0) {
        /* The first 8 bytes of a ctrl segment with opcode, opmod and ds zero. */
        struct mlx5_wqe_ctrl_seg seg;
        memset(&seg, 0, sizeof(seg));
        mlx5dv_set_ctrl_seg(&seg, (uint16_t)number(f, "pi"), 0, 0, (uint32_t)number(f, "qpn"), 0, 0, 0, 0);
        print_hex(f->name, &seg, 8);
        printf("\n");
        return;
    } else if (strcmp(f->kind, "cqe") == 0) {
        struct mlx5_cqe64 cqe;
        memset(&cqe, 0, sizeof(cqe));
        cqe.byte_cnt = htobe32((uint32_t)number(f, "byte_cnt"));
        cqe.sop_drop_qpn = htobe32((uint32_t)(number(f, "s_wqe_opcode") << 24 | number(f, "qpn")));
        cqe.wqe_counter = htobe16((uint16_t)number(f, "wqe_counter"));
        cqe.op_own = (uint8_t)(MLX5_CQE_REQ << 4 | owner_bit(f));
        print_cqe(f, &cqe);
        return;
    } else if (strcmp(f->kind, "err_cqe") == 0) {
        union {
            struct mlx5_cqe64 cqe;
            struct mlx5_err_cqe err;
        } u;
        memset(&u, 0, sizeof(u));
        u.err.vendor_err_synd = (uint8_t)number(f, "vendor_err_synd");
        u.err.syndrome = (uint8_t)number(f, "syndrome");
        u.err.s_wqe_opcode_qpn = htobe32((uint32_t)(number(f, "s_wqe_opcode") << 24 | number(f, "qpn")));
        u.err.wqe_counter = htobe16((uint16_t)number(f, "wqe_counter"));
        u.err.op_own = (uint8_t)(number(f, "opcode") << 4 | owner_bit(f));
        print_cqe(f, &u.cqe);
        return;
    } else {
        die(f, "unknown kind", f->kind);
        return;
    }
    print_hex(f->name, wqe, size);
    printf(" ds=%zu\n", size / 16);
}

static int cases(void)
{
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof(line), stdin) != NULL) {
        if (strchr(line, '\n') == NULL && !feof(stdin)) {
            fprintf(stderr, "mlx5_golden: line longer than %zu bytes\n", sizeof(line));
            return 2;
        }
        struct fields f = {0};
        char *save = NULL;
        for (char *token = strtok_r(line, " \t\r\n", &save); token != NULL;
             token = strtok_r(NULL, " \t\r\n", &save)) {
            if (f.kind == NULL) {
                if (token[0] == '#')
                    break;
                f.kind = token;
                continue;
            }
            char *eq = strchr(token, '=');
            if (eq == NULL || f.count == MAX_FIELDS) {
                fprintf(stderr, "mlx5_golden: bad token '%s'\n", token);
                return 2;
            }
            *eq = '\0';
            f.key[f.count] = token;
            f.value[f.count] = eq + 1;
            f.count++;
            if (strcmp(token, "name") == 0)
                f.name = eq + 1;
        }
        if (f.kind == NULL)
            continue;
        if (f.name == NULL)
            die(&f, "missing key", "name");
        run_case(&f);
        n++;
    }
    return n > 0 ? 0 : 3;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "checked") == 0) {
        for (size_t i = 0; i < sizeof(checked_names) / sizeof(checked_names[0]); i++)
            printf("%s\n", checked_names[i]);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "cases") == 0)
        return cases();
    fprintf(stderr, "usage: mlx5_golden checked | cases < golden-cases.txt\n");
    return 2;
}

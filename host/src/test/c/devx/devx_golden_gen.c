/*
 * Writes devx-golden.txt, the test vectors of DevxCommandsTest: the bit offset and width of every PRM field gda4j's
 * DEVX commands set, each command's size, and the bytes of each command for a few parameter sets, all computed by
 * rdma-core's own DEVX_SET / DEVX_SET64 / DEVX_ADDR_OF (<infiniband/mlx5dv.h>) over the PRM layouts.
 *
 * Not built by the tests: the PRM layouts are not installed headers. It was built once, and its output committed, with
 *   gcc -std=gnu11 -I <rdma-core>/providers/mlx5 -I <nvshmem>/src/modules/transport/common \
 *       devx_golden_gen.c -o devx_golden_gen && ./devx_golden_gen > ../../resources/io/gda4j/mlx5/devx-golden.txt
 * where mlx5_ifc.h is rdma-core's (commit 691953d8d, providers/mlx5/mlx5_ifc.h: the QP commands and qpc) and
 * mlx5_prm.h NVSHMEM's (commit 2d7d25f, src/modules/transport/common/mlx5_prm.h: cqc and create_cq_in, DPDK's
 * layout; rdma-core's header has no CQ command). Rebuild it the same way after changing the fields below.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "mlx5_ifc.h"
#include "mlx5_prm.h"

#define FIELD(typ, fld)                                                                                    \
    printf("field %s.%s %u %u\n", #typ, #fld, (unsigned)__devx_bit_off(typ, fld), (unsigned)__devx_bit_sz(typ, fld))
#define SIZE(typ) printf("size %s %zu\n", #typ, (size_t)DEVX_ST_SZ_BYTES(typ))

static void hex(const char *name, const void *p, size_t n)
{
    printf("case %s ", name);
    for (size_t i = 0; i < n; ++i)
        printf("%02x", ((const uint8_t *)p)[i]);
    printf("\n");
}

static void fields(void)
{
    SIZE(create_cq_in);
    SIZE(create_qp_in);
    SIZE(rst2init_qp_in);
    SIZE(init2rtr_qp_in);
    SIZE(rtr2rts_qp_in);
    SIZE(create_cq_out);
    SIZE(create_qp_out);
    FIELD(create_cq_in, opcode);
    FIELD(create_cq_in, cq_context);
    FIELD(create_cq_in, cq_umem_offset);
    FIELD(create_cq_in, cq_umem_id);
    FIELD(create_cq_in, cq_umem_valid);
    FIELD(cqc, dbr_umem_valid);
    FIELD(cqc, cqe_sz);
    FIELD(cqc, cc);
    FIELD(cqc, oi);
    FIELD(cqc, dbr_umem_id);
    FIELD(cqc, log_cq_size);
    FIELD(cqc, uar_page);
    FIELD(cqc, c_eqn);
    FIELD(cqc, log_page_size);
    FIELD(cqc, dbr_addr);
    FIELD(create_cq_out, cqn);
    FIELD(create_qp_in, opcode);
    FIELD(create_qp_in, qpc);
    FIELD(create_qp_in, wq_umem_id);
    FIELD(create_qp_in, wq_umem_valid);
    FIELD(create_qp_out, status);
    FIELD(create_qp_out, syndrome);
    FIELD(create_qp_out, qpn);
    FIELD(rst2init_qp_in, opcode);
    FIELD(rst2init_qp_in, qpn);
    FIELD(rst2init_qp_in, qpc);
    FIELD(init2rtr_qp_in, opcode);
    FIELD(init2rtr_qp_in, qpn);
    FIELD(init2rtr_qp_in, qpc);
    FIELD(rtr2rts_qp_in, opcode);
    FIELD(rtr2rts_qp_in, qpn);
    FIELD(rtr2rts_qp_in, qpc);
    FIELD(qpc, st);
    FIELD(qpc, pm_state);
    FIELD(qpc, pd);
    FIELD(qpc, mtu);
    FIELD(qpc, log_msg_max);
    FIELD(qpc, log_rq_size);
    FIELD(qpc, no_sq);
    FIELD(qpc, log_sq_size);
    FIELD(qpc, uar_page);
    FIELD(qpc, user_index);
    FIELD(qpc, log_page_size);
    FIELD(qpc, remote_qpn);
    FIELD(qpc, primary_address_path.pkey_index);
    FIELD(qpc, primary_address_path.grh);
    FIELD(qpc, primary_address_path.mlid);
    FIELD(qpc, primary_address_path.rlid);
    FIELD(qpc, primary_address_path.ack_timeout);
    FIELD(qpc, primary_address_path.src_addr_index);
    FIELD(qpc, primary_address_path.hop_limit);
    FIELD(qpc, primary_address_path.tclass);
    FIELD(qpc, primary_address_path.rgid_rip);
    FIELD(qpc, primary_address_path.dscp);
    FIELD(qpc, primary_address_path.udp_sport);
    FIELD(qpc, primary_address_path.eth_prio);
    FIELD(qpc, primary_address_path.sl);
    FIELD(qpc, primary_address_path.vhca_port_num);
    FIELD(qpc, primary_address_path.rmac_47_32);
    FIELD(qpc, log_ack_req_freq);
    FIELD(qpc, log_sra_max);
    FIELD(qpc, retry_count);
    FIELD(qpc, rnr_retry);
    FIELD(qpc, next_send_psn);
    FIELD(qpc, cqn_snd);
    FIELD(qpc, log_rra_max);
    FIELD(qpc, atomic_mode);
    FIELD(qpc, rre);
    FIELD(qpc, rwe);
    FIELD(qpc, rae);
    FIELD(qpc, page_offset);
    FIELD(qpc, min_rnr_nak);
    FIELD(qpc, next_rcv_psn);
    FIELD(qpc, cqn_rcv);
    FIELD(qpc, dbr_addr);
    FIELD(qpc, rq_type);
    FIELD(qpc, dbr_umem_valid);
    FIELD(qpc, dbr_umem_id);
}

/* The CQ: a ring of 2^log_size 64-byte CQEs in a GPU umem, its doorbell record at dbr_offset of another. */
static void create_cq(const char *name, uint32_t umem, uint64_t umem_offset, uint32_t dbr_umem, uint64_t dbr_offset,
                      uint32_t log_size, uint32_t uar_page, uint32_t eqn, uint32_t log_page_size)
{
    uint8_t in[DEVX_ST_SZ_BYTES(create_cq_in)];
    memset(in, 0, sizeof in);
    DEVX_SET(create_cq_in, in, opcode, MLX5_CMD_OP_CREATE_CQ);
    DEVX_SET(create_cq_in, in, cq_umem_id, umem);
    DEVX_SET64(create_cq_in, in, cq_umem_offset, umem_offset);
    DEVX_SET(create_cq_in, in, cq_umem_valid, 1);
    void *cqc = DEVX_ADDR_OF(create_cq_in, in, cq_context);
    DEVX_SET(cqc, cqc, dbr_umem_valid, 1);
    DEVX_SET(cqc, cqc, cqe_sz, MLX5_CQE_SIZE_64B);
    DEVX_SET(cqc, cqc, dbr_umem_id, dbr_umem);
    DEVX_SET(cqc, cqc, log_cq_size, log_size);
    DEVX_SET(cqc, cqc, uar_page, uar_page);
    DEVX_SET(cqc, cqc, c_eqn, eqn);
    DEVX_SET(cqc, cqc, log_page_size, log_page_size);
    DEVX_SET64(cqc, cqc, dbr_addr, dbr_offset);
    hex(name, in, sizeof in);
}

/* An RC QP with no receive queue: the send queue 2^log_sq WQEBBs in a GPU umem, its doorbell record in another. */
static void create_qp(const char *name, uint32_t pd, uint32_t uar_page, uint32_t cqn, uint32_t log_sq,
                      uint32_t wq_umem, uint32_t dbr_umem, uint64_t dbr_offset, uint32_t user_index,
                      uint32_t log_page_size)
{
    uint8_t in[DEVX_ST_SZ_BYTES(create_qp_in)];
    memset(in, 0, sizeof in);
    DEVX_SET(create_qp_in, in, opcode, MLX5_CMD_OP_CREATE_QP);
    DEVX_SET(create_qp_in, in, wq_umem_id, wq_umem);
    DEVX_SET(create_qp_in, in, wq_umem_valid, 1);
    void *qpc = DEVX_ADDR_OF(create_qp_in, in, qpc);
    DEVX_SET(qpc, qpc, st, MLX5_QPC_ST_RC);
    DEVX_SET(qpc, qpc, pm_state, MLX5_QPC_PM_STATE_MIGRATED);
    DEVX_SET(qpc, qpc, pd, pd);
    DEVX_SET(qpc, qpc, uar_page, uar_page);
    DEVX_SET(qpc, qpc, rq_type, 3); /* zero-length receive queue: gda4j posts no receives */
    DEVX_SET(qpc, qpc, cqn_snd, cqn);
    DEVX_SET(qpc, qpc, cqn_rcv, cqn);
    DEVX_SET(qpc, qpc, log_sq_size, log_sq);
    DEVX_SET(qpc, qpc, log_page_size, log_page_size);
    DEVX_SET(qpc, qpc, user_index, user_index);
    DEVX_SET(qpc, qpc, dbr_umem_valid, 1);
    DEVX_SET(qpc, qpc, dbr_umem_id, dbr_umem);
    DEVX_SET64(qpc, qpc, dbr_addr, dbr_offset);
    hex(name, in, sizeof in);
}

static void rst2init(const char *name, uint32_t qpn, uint32_t port)
{
    uint8_t in[DEVX_ST_SZ_BYTES(rst2init_qp_in)];
    memset(in, 0, sizeof in);
    DEVX_SET(rst2init_qp_in, in, opcode, MLX5_CMD_OP_RST2INIT_QP);
    DEVX_SET(rst2init_qp_in, in, qpn, qpn);
    void *qpc = DEVX_ADDR_OF(rst2init_qp_in, in, qpc);
    DEVX_SET(qpc, qpc, rwe, 1);
    DEVX_SET(qpc, qpc, rre, 1);
    DEVX_SET(qpc, qpc, rae, 1);
    DEVX_SET(qpc, qpc, atomic_mode, 3); /* up to 64-bit atomics */
    DEVX_SET(qpc, qpc, primary_address_path.vhca_port_num, port);
    DEVX_SET(qpc, qpc, primary_address_path.pkey_index, 0);
    DEVX_SET(qpc, qpc, pm_state, MLX5_QPC_PM_STATE_MIGRATED);
    hex(name, in, sizeof in);
}

/* INIT -> RTR toward remote_qpn: InfiniBand by LID (gid == NULL), RoCE by GID (hop limit, source GID index, UDP source
 * port, DSCP) and the next hop's MAC. */
static void init2rtr(const char *name, uint32_t qpn, uint32_t mtu, uint32_t remote_qpn, uint32_t rcv_psn,
                     uint32_t log_rra, uint32_t lid, const uint8_t *gid, uint32_t gid_index, uint32_t udp_sport,
                     uint32_t sl, uint32_t tclass, const uint8_t *rmac)
{
    uint8_t in[DEVX_ST_SZ_BYTES(init2rtr_qp_in)];
    memset(in, 0, sizeof in);
    DEVX_SET(init2rtr_qp_in, in, opcode, MLX5_CMD_OP_INIT2RTR_QP);
    DEVX_SET(init2rtr_qp_in, in, qpn, qpn);
    void *qpc = DEVX_ADDR_OF(init2rtr_qp_in, in, qpc);
    DEVX_SET(qpc, qpc, mtu, mtu);
    DEVX_SET(qpc, qpc, log_msg_max, 30);
    DEVX_SET(qpc, qpc, remote_qpn, remote_qpn);
    DEVX_SET(qpc, qpc, next_rcv_psn, rcv_psn);
    DEVX_SET(qpc, qpc, min_rnr_nak, 12);
    DEVX_SET(qpc, qpc, log_rra_max, log_rra);
    if (gid == NULL) {
        DEVX_SET(qpc, qpc, primary_address_path.tclass, tclass);
        DEVX_SET(qpc, qpc, primary_address_path.rlid, lid);
        DEVX_SET(qpc, qpc, primary_address_path.mlid, 0);
        DEVX_SET(qpc, qpc, primary_address_path.sl, sl);
        DEVX_SET(qpc, qpc, primary_address_path.grh, 0);
    } else {
        memcpy(DEVX_ADDR_OF(qpc, qpc, primary_address_path.rmac_47_32), rmac, 6);
        DEVX_SET(qpc, qpc, primary_address_path.hop_limit, 64);
        DEVX_SET(qpc, qpc, primary_address_path.src_addr_index, gid_index);
        DEVX_SET(qpc, qpc, primary_address_path.eth_prio, sl);
        DEVX_SET(qpc, qpc, primary_address_path.udp_sport, udp_sport);
        DEVX_SET(qpc, qpc, primary_address_path.dscp, tclass >> 2);
        memcpy(DEVX_ADDR_OF(qpc, qpc, primary_address_path.rgid_rip), gid, 16);
    }
    hex(name, in, sizeof in);
}

static void rtr2rts(const char *name, uint32_t qpn, uint32_t send_psn, uint32_t log_sra, uint32_t retry,
                    uint32_t rnr_retry, uint32_t ack_timeout)
{
    uint8_t in[DEVX_ST_SZ_BYTES(rtr2rts_qp_in)];
    memset(in, 0, sizeof in);
    DEVX_SET(rtr2rts_qp_in, in, opcode, MLX5_CMD_OP_RTR2RTS_QP);
    DEVX_SET(rtr2rts_qp_in, in, qpn, qpn);
    void *qpc = DEVX_ADDR_OF(rtr2rts_qp_in, in, qpc);
    DEVX_SET(qpc, qpc, log_ack_req_freq, 0);
    DEVX_SET(qpc, qpc, log_sra_max, log_sra);
    DEVX_SET(qpc, qpc, next_send_psn, send_psn);
    DEVX_SET(qpc, qpc, retry_count, retry);
    DEVX_SET(qpc, qpc, rnr_retry, rnr_retry);
    DEVX_SET(qpc, qpc, primary_address_path.ack_timeout, ack_timeout);
    hex(name, in, sizeof in);
}

int main(void)
{
    static const uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 7};
    static const uint8_t rmac[6] = {0x0c, 0x42, 0xa1, 0x12, 0x34, 0x56};
    fields();
    create_cq("create_cq.small", 0x11, 0, 0x22, 0x40, 10, 0x33, 7, 4);
    create_cq("create_cq.large", 0xabcdef, 0x10000, 0x123456, 0x1000, 15, 0xfffff, 0xff, 4);
    create_qp("create_qp.small", 0x1234, 0x33, 0x55, 10, 0x66, 0x77, 8, 0, 4);
    create_qp("create_qp.large", 0xfedcba, 0xfffff, 0xabcdef, 15, 0x13579b, 0x2468ac, 0x1008, 0x654321, 4);
    rst2init("rst2init.port1", 0x000123, 1);
    rst2init("rst2init.port2", 0xfedcba, 2);
    init2rtr("init2rtr.ib", 0x000123, 5, 0x000456, 0x789abc, 4, 0x0017, NULL, 0, 0, 3, 0, NULL);
    init2rtr("init2rtr.roce", 0xfedcba, 3, 0xabcdef, 0x123456, 4, 0, gid, 3, 0xc001, 0, 106, rmac);
    rtr2rts("rtr2rts.default", 0x000123, 0x789abc, 4, 7, 7, 20);
    rtr2rts("rtr2rts.other", 0xfedcba, 0x123456, 0, 3, 0, 14);
    return 0;
}

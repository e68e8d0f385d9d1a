/*
 * The struct ibv_qp_attr and attribute mask that an rdma-core application passes to ibv_modify_qp(INIT -> RTR) for an
 * RC QP towards a peer endpoint (the way rdma-core's own examples, ibv_rc_pingpong, fill it): the fields from the
 * peer (dest_qp_num, rq_psn, ah_attr.dlid, ah_attr.grh.dgid when the GID is not zero) and the local choices.
 *
 *   rc_rtr_golden QPN PSN LID GID_HEX32 PATH_MTU PORT SGID_INDEX HOP_LIMIT TRAFFIC_CLASS SL MAX_DEST_RD_ATOMIC
 *                 MIN_RNR_TIMER
 *
 * prints the mask in decimal on one line, then the struct's bytes in hex on the next. Mlx5RtrPathTest compares them
 * with what io.gda4j.verbs.QueuePair.writeRtrAttributes writes for the same endpoint. Nothing is linked or called.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

int main(int argc, char **argv)
{
    if (argc != 13 || strlen(argv[4]) != 32) {
        fprintf(stderr, "usage: rc_rtr_golden QPN PSN LID GID_HEX32 PATH_MTU PORT SGID_INDEX HOP_LIMIT"
                " TRAFFIC_CLASS SL MAX_DEST_RD_ATOMIC MIN_RNR_TIMER\n");
        return 2;
    }
    union ibv_gid gid;
    int global = 0;
    for (int i = 0; i < 16; i++) {
        char byte[3] = {argv[4][2 * i], argv[4][2 * i + 1], 0};
        gid.raw[i] = (uint8_t)strtoul(byte, NULL, 16);
        global |= gid.raw[i] != 0;
    }
    struct ibv_qp_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = (enum ibv_mtu)strtoul(argv[5], NULL, 0);
    attr.dest_qp_num = (uint32_t)strtoul(argv[1], NULL, 0);
    attr.rq_psn = (uint32_t)strtoul(argv[2], NULL, 0);
    attr.max_dest_rd_atomic = (uint8_t)strtoul(argv[11], NULL, 0);
    attr.min_rnr_timer = (uint8_t)strtoul(argv[12], NULL, 0);
    attr.ah_attr.is_global = global;
    attr.ah_attr.dlid = (uint16_t)strtoul(argv[3], NULL, 0);
    attr.ah_attr.sl = (uint8_t)strtoul(argv[10], NULL, 0);
    attr.ah_attr.src_path_bits = 0;
    attr.ah_attr.port_num = (uint8_t)strtoul(argv[6], NULL, 0);
    if (global) {
        attr.ah_attr.grh.dgid = gid;
        attr.ah_attr.grh.sgid_index = (uint8_t)strtoul(argv[7], NULL, 0);
        attr.ah_attr.grh.hop_limit = (uint8_t)strtoul(argv[8], NULL, 0);
        attr.ah_attr.grh.traffic_class = (uint8_t)strtoul(argv[9], NULL, 0);
    }
    int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN
            | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    printf("%d\n", mask);
    const unsigned char *bytes = (const unsigned char *)&attr;
    for (size_t i = 0; i < sizeof(attr); i++) {
        printf("%02x", bytes[i]);
    }
    printf("\n");
    return 0;
}

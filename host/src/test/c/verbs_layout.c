/*
 * Prints, for every struct size, field offset and enum value the Java verbs bindings use, the Java constant's name
 * and what <infiniband/verbs.h> / <infiniband/mlx5dv.h> say:
 *
 *   IbvQpAttrDescriptor.AH_ATTR_OFFSET 56
 *
 * VerbsLayoutTest compiles it (gcc -std=gnu11 verbs_layout.c), runs it, looks each name up in io.gda4j.verbs by
 * reflection and compares; it also fails when a Java constant has no line here. Nothing is linked or called: the
 * program runs on machines without any RDMA device or library.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#define SIZE(jclass, type) printf("%s.SIZE %zu\n", #jclass, sizeof(type))
#define OFF(jclass, jfield, type, member) printf("%s.%s %zu\n", #jclass, #jfield, offsetof(type, member))
#define VALUE(jclass, jfield, expr) printf("%s.%s %lld\n", #jclass, #jfield, (long long)(expr))

static void device_and_port(void)
{
    SIZE(IbvDeviceAttrDescriptor, struct ibv_device_attr);
    OFF(IbvDeviceAttrDescriptor, FW_VER_OFFSET, struct ibv_device_attr, fw_ver);
    VALUE(IbvDeviceAttrDescriptor, FW_VER_LENGTH, sizeof(((struct ibv_device_attr *)0)->fw_ver));
    OFF(IbvDeviceAttrDescriptor, NODE_GUID_OFFSET, struct ibv_device_attr, node_guid);
    OFF(IbvDeviceAttrDescriptor, SYS_IMAGE_GUID_OFFSET, struct ibv_device_attr, sys_image_guid);
    OFF(IbvDeviceAttrDescriptor, MAX_MR_SIZE_OFFSET, struct ibv_device_attr, max_mr_size);
    OFF(IbvDeviceAttrDescriptor, PAGE_SIZE_CAP_OFFSET, struct ibv_device_attr, page_size_cap);
    OFF(IbvDeviceAttrDescriptor, VENDOR_ID_OFFSET, struct ibv_device_attr, vendor_id);
    OFF(IbvDeviceAttrDescriptor, VENDOR_PART_ID_OFFSET, struct ibv_device_attr, vendor_part_id);
    OFF(IbvDeviceAttrDescriptor, HW_VER_OFFSET, struct ibv_device_attr, hw_ver);
    OFF(IbvDeviceAttrDescriptor, MAX_QP_OFFSET, struct ibv_device_attr, max_qp);
    OFF(IbvDeviceAttrDescriptor, MAX_QP_WR_OFFSET, struct ibv_device_attr, max_qp_wr);
    OFF(IbvDeviceAttrDescriptor, DEVICE_CAP_FLAGS_OFFSET, struct ibv_device_attr, device_cap_flags);
    OFF(IbvDeviceAttrDescriptor, MAX_SGE_OFFSET, struct ibv_device_attr, max_sge);
    OFF(IbvDeviceAttrDescriptor, MAX_CQ_OFFSET, struct ibv_device_attr, max_cq);
    OFF(IbvDeviceAttrDescriptor, MAX_CQE_OFFSET, struct ibv_device_attr, max_cqe);
    OFF(IbvDeviceAttrDescriptor, MAX_MR_OFFSET, struct ibv_device_attr, max_mr);
    OFF(IbvDeviceAttrDescriptor, MAX_PD_OFFSET, struct ibv_device_attr, max_pd);
    OFF(IbvDeviceAttrDescriptor, MAX_QP_RD_ATOM_OFFSET, struct ibv_device_attr, max_qp_rd_atom);
    OFF(IbvDeviceAttrDescriptor, MAX_QP_INIT_RD_ATOM_OFFSET, struct ibv_device_attr, max_qp_init_rd_atom);
    OFF(IbvDeviceAttrDescriptor, ATOMIC_CAP_OFFSET, struct ibv_device_attr, atomic_cap);
    OFF(IbvDeviceAttrDescriptor, PHYS_PORT_CNT_OFFSET, struct ibv_device_attr, phys_port_cnt);

    SIZE(IbvPortAttrDescriptor, struct ibv_port_attr);
    OFF(IbvPortAttrDescriptor, STATE_OFFSET, struct ibv_port_attr, state);
    OFF(IbvPortAttrDescriptor, MAX_MTU_OFFSET, struct ibv_port_attr, max_mtu);
    OFF(IbvPortAttrDescriptor, ACTIVE_MTU_OFFSET, struct ibv_port_attr, active_mtu);
    OFF(IbvPortAttrDescriptor, GID_TBL_LEN_OFFSET, struct ibv_port_attr, gid_tbl_len);
    OFF(IbvPortAttrDescriptor, PORT_CAP_FLAGS_OFFSET, struct ibv_port_attr, port_cap_flags);
    OFF(IbvPortAttrDescriptor, MAX_MSG_SZ_OFFSET, struct ibv_port_attr, max_msg_sz);
    OFF(IbvPortAttrDescriptor, LID_OFFSET, struct ibv_port_attr, lid);
    OFF(IbvPortAttrDescriptor, SM_LID_OFFSET, struct ibv_port_attr, sm_lid);
    OFF(IbvPortAttrDescriptor, ACTIVE_WIDTH_OFFSET, struct ibv_port_attr, active_width);
    OFF(IbvPortAttrDescriptor, ACTIVE_SPEED_OFFSET, struct ibv_port_attr, active_speed);
    OFF(IbvPortAttrDescriptor, PHYS_STATE_OFFSET, struct ibv_port_attr, phys_state);
    OFF(IbvPortAttrDescriptor, LINK_LAYER_OFFSET, struct ibv_port_attr, link_layer);
    OFF(IbvPortAttrDescriptor, FLAGS_OFFSET, struct ibv_port_attr, flags);
    /* The exported ibv_query_port fills only the _compat_ibv_port_attr prefix: everything before this field. */
    OFF(IbvPortAttrDescriptor, PORT_CAP_FLAGS2_OFFSET, struct ibv_port_attr, port_cap_flags2);

    SIZE(IbvGidDescriptor, union ibv_gid);
    OFF(IbvGidDescriptor, RAW_OFFSET, union ibv_gid, raw);
    OFF(IbvGidDescriptor, SUBNET_PREFIX_OFFSET, union ibv_gid, global.subnet_prefix);
    OFF(IbvGidDescriptor, INTERFACE_ID_OFFSET, union ibv_gid, global.interface_id);
}

static void queue_pairs(void)
{
    SIZE(IbvQpCapDescriptor, struct ibv_qp_cap);
    OFF(IbvQpCapDescriptor, MAX_SEND_WR_OFFSET, struct ibv_qp_cap, max_send_wr);
    OFF(IbvQpCapDescriptor, MAX_RECV_WR_OFFSET, struct ibv_qp_cap, max_recv_wr);
    OFF(IbvQpCapDescriptor, MAX_SEND_SGE_OFFSET, struct ibv_qp_cap, max_send_sge);
    OFF(IbvQpCapDescriptor, MAX_RECV_SGE_OFFSET, struct ibv_qp_cap, max_recv_sge);
    OFF(IbvQpCapDescriptor, MAX_INLINE_DATA_OFFSET, struct ibv_qp_cap, max_inline_data);

    SIZE(IbvQpInitAttrDescriptor, struct ibv_qp_init_attr);
    OFF(IbvQpInitAttrDescriptor, QP_CONTEXT_OFFSET, struct ibv_qp_init_attr, qp_context);
    OFF(IbvQpInitAttrDescriptor, SEND_CQ_OFFSET, struct ibv_qp_init_attr, send_cq);
    OFF(IbvQpInitAttrDescriptor, RECV_CQ_OFFSET, struct ibv_qp_init_attr, recv_cq);
    OFF(IbvQpInitAttrDescriptor, SRQ_OFFSET, struct ibv_qp_init_attr, srq);
    OFF(IbvQpInitAttrDescriptor, CAP_OFFSET, struct ibv_qp_init_attr, cap);
    OFF(IbvQpInitAttrDescriptor, QP_TYPE_OFFSET, struct ibv_qp_init_attr, qp_type);
    OFF(IbvQpInitAttrDescriptor, SQ_SIG_ALL_OFFSET, struct ibv_qp_init_attr, sq_sig_all);

    SIZE(IbvGlobalRouteDescriptor, struct ibv_global_route);
    OFF(IbvGlobalRouteDescriptor, DGID_OFFSET, struct ibv_global_route, dgid);
    OFF(IbvGlobalRouteDescriptor, FLOW_LABEL_OFFSET, struct ibv_global_route, flow_label);
    OFF(IbvGlobalRouteDescriptor, SGID_INDEX_OFFSET, struct ibv_global_route, sgid_index);
    OFF(IbvGlobalRouteDescriptor, HOP_LIMIT_OFFSET, struct ibv_global_route, hop_limit);
    OFF(IbvGlobalRouteDescriptor, TRAFFIC_CLASS_OFFSET, struct ibv_global_route, traffic_class);

    SIZE(IbvAhAttrDescriptor, struct ibv_ah_attr);
    OFF(IbvAhAttrDescriptor, GRH_OFFSET, struct ibv_ah_attr, grh);
    OFF(IbvAhAttrDescriptor, DLID_OFFSET, struct ibv_ah_attr, dlid);
    OFF(IbvAhAttrDescriptor, SL_OFFSET, struct ibv_ah_attr, sl);
    OFF(IbvAhAttrDescriptor, SRC_PATH_BITS_OFFSET, struct ibv_ah_attr, src_path_bits);
    OFF(IbvAhAttrDescriptor, STATIC_RATE_OFFSET, struct ibv_ah_attr, static_rate);
    OFF(IbvAhAttrDescriptor, IS_GLOBAL_OFFSET, struct ibv_ah_attr, is_global);
    OFF(IbvAhAttrDescriptor, PORT_NUM_OFFSET, struct ibv_ah_attr, port_num);

    SIZE(IbvQpAttrDescriptor, struct ibv_qp_attr);
    OFF(IbvQpAttrDescriptor, QP_STATE_OFFSET, struct ibv_qp_attr, qp_state);
    OFF(IbvQpAttrDescriptor, CUR_QP_STATE_OFFSET, struct ibv_qp_attr, cur_qp_state);
    OFF(IbvQpAttrDescriptor, PATH_MTU_OFFSET, struct ibv_qp_attr, path_mtu);
    OFF(IbvQpAttrDescriptor, QKEY_OFFSET, struct ibv_qp_attr, qkey);
    OFF(IbvQpAttrDescriptor, RQ_PSN_OFFSET, struct ibv_qp_attr, rq_psn);
    OFF(IbvQpAttrDescriptor, SQ_PSN_OFFSET, struct ibv_qp_attr, sq_psn);
    OFF(IbvQpAttrDescriptor, DEST_QP_NUM_OFFSET, struct ibv_qp_attr, dest_qp_num);
    OFF(IbvQpAttrDescriptor, QP_ACCESS_FLAGS_OFFSET, struct ibv_qp_attr, qp_access_flags);
    OFF(IbvQpAttrDescriptor, CAP_OFFSET, struct ibv_qp_attr, cap);
    OFF(IbvQpAttrDescriptor, AH_ATTR_OFFSET, struct ibv_qp_attr, ah_attr);
    OFF(IbvQpAttrDescriptor, PKEY_INDEX_OFFSET, struct ibv_qp_attr, pkey_index);
    OFF(IbvQpAttrDescriptor, MAX_RD_ATOMIC_OFFSET, struct ibv_qp_attr, max_rd_atomic);
    OFF(IbvQpAttrDescriptor, MAX_DEST_RD_ATOMIC_OFFSET, struct ibv_qp_attr, max_dest_rd_atomic);
    OFF(IbvQpAttrDescriptor, MIN_RNR_TIMER_OFFSET, struct ibv_qp_attr, min_rnr_timer);
    OFF(IbvQpAttrDescriptor, PORT_NUM_OFFSET, struct ibv_qp_attr, port_num);
    OFF(IbvQpAttrDescriptor, TIMEOUT_OFFSET, struct ibv_qp_attr, timeout);
    OFF(IbvQpAttrDescriptor, RETRY_CNT_OFFSET, struct ibv_qp_attr, retry_cnt);
    OFF(IbvQpAttrDescriptor, RNR_RETRY_OFFSET, struct ibv_qp_attr, rnr_retry);

    OFF(IbvQpDescriptor, CONTEXT_OFFSET, struct ibv_qp, context);
    OFF(IbvQpDescriptor, QP_NUM_OFFSET, struct ibv_qp, qp_num);
    OFF(IbvQpDescriptor, STATE_OFFSET, struct ibv_qp, state);
    OFF(IbvQpDescriptor, QP_TYPE_OFFSET, struct ibv_qp, qp_type);
}

static void memory_and_queues(void)
{
    OFF(IbvMrDescriptor, CONTEXT_OFFSET, struct ibv_mr, context);
    OFF(IbvMrDescriptor, PD_OFFSET, struct ibv_mr, pd);
    OFF(IbvMrDescriptor, ADDR_OFFSET, struct ibv_mr, addr);
    OFF(IbvMrDescriptor, LENGTH_OFFSET, struct ibv_mr, length);
    OFF(IbvMrDescriptor, HANDLE_OFFSET, struct ibv_mr, handle);
    OFF(IbvMrDescriptor, LKEY_OFFSET, struct ibv_mr, lkey);
    OFF(IbvMrDescriptor, RKEY_OFFSET, struct ibv_mr, rkey);

    OFF(IbvPdDescriptor, CONTEXT_OFFSET, struct ibv_pd, context);

    OFF(IbvCqDescriptor, CONTEXT_OFFSET, struct ibv_cq, context);
    OFF(IbvCqDescriptor, CQE_OFFSET, struct ibv_cq, cqe);

    SIZE(IbvContextDescriptor, struct ibv_context);
    OFF(IbvContextDescriptor, DEVICE_OFFSET, struct ibv_context, device);
    OFF(IbvContextDescriptor, ABI_COMPAT_OFFSET, struct ibv_context, abi_compat);
    OFF(IbvContextDescriptor, OPS_POLL_CQ_OFFSET, struct ibv_context, ops.poll_cq);
    OFF(IbvContextDescriptor, OPS_POST_SEND_OFFSET, struct ibv_context, ops.post_send);
    VALUE(IbvContextDescriptor, ABI_IS_EXTENDED, (intptr_t)__VERBS_ABI_IS_EXTENDED);
    VALUE(IbvContextDescriptor, VERBS_CONTEXT_SIZE, sizeof(struct verbs_context));
    OFF(IbvContextDescriptor, VERBS_CONTEXT_QUERY_PORT_OFFSET, struct verbs_context, query_port);
    OFF(IbvContextDescriptor, VERBS_CONTEXT_ALLOC_NULL_MR_OFFSET, struct verbs_context, alloc_null_mr);
    OFF(IbvContextDescriptor, VERBS_CONTEXT_SZ_OFFSET, struct verbs_context, sz);
    OFF(IbvContextDescriptor, VERBS_CONTEXT_CONTEXT_OFFSET, struct verbs_context, context);
}

static void work_requests(void)
{
    SIZE(IbvSendWrDescriptor, struct ibv_send_wr);
    OFF(IbvSendWrDescriptor, WR_ID_OFFSET, struct ibv_send_wr, wr_id);
    OFF(IbvSendWrDescriptor, NEXT_OFFSET, struct ibv_send_wr, next);
    OFF(IbvSendWrDescriptor, SG_LIST_OFFSET, struct ibv_send_wr, sg_list);
    OFF(IbvSendWrDescriptor, NUM_SGE_OFFSET, struct ibv_send_wr, num_sge);
    OFF(IbvSendWrDescriptor, OPCODE_OFFSET, struct ibv_send_wr, opcode);
    OFF(IbvSendWrDescriptor, SEND_FLAGS_OFFSET, struct ibv_send_wr, send_flags);
    OFF(IbvSendWrDescriptor, IMM_DATA_OFFSET, struct ibv_send_wr, imm_data);
    OFF(IbvSendWrDescriptor, RDMA_REMOTE_ADDR_OFFSET, struct ibv_send_wr, wr.rdma.remote_addr);
    OFF(IbvSendWrDescriptor, RDMA_RKEY_OFFSET, struct ibv_send_wr, wr.rdma.rkey);
    OFF(IbvSendWrDescriptor, ATOMIC_REMOTE_ADDR_OFFSET, struct ibv_send_wr, wr.atomic.remote_addr);
    OFF(IbvSendWrDescriptor, ATOMIC_COMPARE_ADD_OFFSET, struct ibv_send_wr, wr.atomic.compare_add);
    OFF(IbvSendWrDescriptor, ATOMIC_SWAP_OFFSET, struct ibv_send_wr, wr.atomic.swap);
    OFF(IbvSendWrDescriptor, ATOMIC_RKEY_OFFSET, struct ibv_send_wr, wr.atomic.rkey);
    VALUE(IbvSendWrDescriptor, SGE_SIZE, sizeof(struct ibv_sge));
    OFF(IbvSendWrDescriptor, SGE_ADDR_OFFSET, struct ibv_sge, addr);
    OFF(IbvSendWrDescriptor, SGE_LENGTH_OFFSET, struct ibv_sge, length);
    OFF(IbvSendWrDescriptor, SGE_LKEY_OFFSET, struct ibv_sge, lkey);

    SIZE(IbvWcDescriptor, struct ibv_wc);
    OFF(IbvWcDescriptor, WR_ID_OFFSET, struct ibv_wc, wr_id);
    OFF(IbvWcDescriptor, STATUS_OFFSET, struct ibv_wc, status);
    OFF(IbvWcDescriptor, OPCODE_OFFSET, struct ibv_wc, opcode);
    OFF(IbvWcDescriptor, VENDOR_ERR_OFFSET, struct ibv_wc, vendor_err);
    OFF(IbvWcDescriptor, BYTE_LEN_OFFSET, struct ibv_wc, byte_len);
    OFF(IbvWcDescriptor, QP_NUM_OFFSET, struct ibv_wc, qp_num);

    VALUE(VerbsConstants, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE);
    VALUE(VerbsConstants, IBV_WR_RDMA_READ, IBV_WR_RDMA_READ);
    VALUE(VerbsConstants, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP);
    VALUE(VerbsConstants, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD);
    VALUE(VerbsConstants, IBV_SEND_FENCE, IBV_SEND_FENCE);
    VALUE(VerbsConstants, IBV_SEND_SIGNALED, IBV_SEND_SIGNALED);
    VALUE(VerbsConstants, IBV_SEND_INLINE, IBV_SEND_INLINE);
    VALUE(VerbsConstants, IBV_WC_SUCCESS, IBV_WC_SUCCESS);
    VALUE(VerbsConstants, IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR);
    VALUE(VerbsConstants, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR);
    VALUE(VerbsConstants, IBV_WC_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR);
    VALUE(VerbsConstants, IBV_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR);
    VALUE(VerbsConstants, IBV_WC_MW_BIND_ERR, IBV_WC_MW_BIND_ERR);
    VALUE(VerbsConstants, IBV_WC_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR);
    VALUE(VerbsConstants, IBV_WC_LOC_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR);
    VALUE(VerbsConstants, IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR);
    VALUE(VerbsConstants, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR);
    VALUE(VerbsConstants, IBV_WC_REM_OP_ERR, IBV_WC_REM_OP_ERR);
    VALUE(VerbsConstants, IBV_WC_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR);
    VALUE(VerbsConstants, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR);
    VALUE(VerbsConstants, IBV_WC_REM_ABORT_ERR, IBV_WC_REM_ABORT_ERR);
    VALUE(VerbsConstants, IBV_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR);
}

static void mlx5dv(void)
{
    SIZE(Mlx5dvQpDescriptor, struct mlx5dv_qp);
    OFF(Mlx5dvQpDescriptor, DBREC_OFFSET, struct mlx5dv_qp, dbrec);
    OFF(Mlx5dvQpDescriptor, SQ_BUF_OFFSET, struct mlx5dv_qp, sq.buf);
    OFF(Mlx5dvQpDescriptor, SQ_WQE_CNT_OFFSET, struct mlx5dv_qp, sq.wqe_cnt);
    OFF(Mlx5dvQpDescriptor, SQ_STRIDE_OFFSET, struct mlx5dv_qp, sq.stride);
    OFF(Mlx5dvQpDescriptor, RQ_BUF_OFFSET, struct mlx5dv_qp, rq.buf);
    OFF(Mlx5dvQpDescriptor, RQ_WQE_CNT_OFFSET, struct mlx5dv_qp, rq.wqe_cnt);
    OFF(Mlx5dvQpDescriptor, RQ_STRIDE_OFFSET, struct mlx5dv_qp, rq.stride);
    OFF(Mlx5dvQpDescriptor, BF_REG_OFFSET, struct mlx5dv_qp, bf.reg);
    OFF(Mlx5dvQpDescriptor, BF_SIZE_OFFSET, struct mlx5dv_qp, bf.size);
    OFF(Mlx5dvQpDescriptor, COMP_MASK_OFFSET, struct mlx5dv_qp, comp_mask);

    SIZE(Mlx5dvCqDescriptor, struct mlx5dv_cq);
    OFF(Mlx5dvCqDescriptor, BUF_OFFSET, struct mlx5dv_cq, buf);
    OFF(Mlx5dvCqDescriptor, DBREC_OFFSET, struct mlx5dv_cq, dbrec);
    OFF(Mlx5dvCqDescriptor, CQE_CNT_OFFSET, struct mlx5dv_cq, cqe_cnt);
    OFF(Mlx5dvCqDescriptor, CQE_SIZE_OFFSET, struct mlx5dv_cq, cqe_size);
    OFF(Mlx5dvCqDescriptor, CQ_UAR_OFFSET, struct mlx5dv_cq, cq_uar);
    OFF(Mlx5dvCqDescriptor, CQN_OFFSET, struct mlx5dv_cq, cqn);
    OFF(Mlx5dvCqDescriptor, COMP_MASK_OFFSET, struct mlx5dv_cq, comp_mask);

    VALUE(Mlx5dvDevxDescriptor, UMEM_IN_SIZE, sizeof(struct mlx5dv_devx_umem_in));
    OFF(Mlx5dvDevxDescriptor, UMEM_IN_ADDR_OFFSET, struct mlx5dv_devx_umem_in, addr);
    OFF(Mlx5dvDevxDescriptor, UMEM_IN_SIZE_OFFSET, struct mlx5dv_devx_umem_in, size);
    OFF(Mlx5dvDevxDescriptor, UMEM_IN_ACCESS_OFFSET, struct mlx5dv_devx_umem_in, access);
    OFF(Mlx5dvDevxDescriptor, UMEM_IN_PGSZ_BITMAP_OFFSET, struct mlx5dv_devx_umem_in, pgsz_bitmap);
    OFF(Mlx5dvDevxDescriptor, UMEM_IN_COMP_MASK_OFFSET, struct mlx5dv_devx_umem_in, comp_mask);
    OFF(Mlx5dvDevxDescriptor, UMEM_IN_DMABUF_FD_OFFSET, struct mlx5dv_devx_umem_in, dmabuf_fd);
    VALUE(Mlx5dvDevxDescriptor, UMEM_MASK_DMABUF, MLX5DV_UMEM_MASK_DMABUF);
    OFF(Mlx5dvDevxDescriptor, UMEM_UMEM_ID_OFFSET, struct mlx5dv_devx_umem, umem_id);
    OFF(Mlx5dvDevxDescriptor, UAR_REG_ADDR_OFFSET, struct mlx5dv_devx_uar, reg_addr);
    OFF(Mlx5dvDevxDescriptor, UAR_BASE_ADDR_OFFSET, struct mlx5dv_devx_uar, base_addr);
    OFF(Mlx5dvDevxDescriptor, UAR_PAGE_ID_OFFSET, struct mlx5dv_devx_uar, page_id);
    VALUE(Mlx5dvDevxDescriptor, PD_SIZE, sizeof(struct mlx5dv_pd));
    OFF(Mlx5dvDevxDescriptor, PD_PDN_OFFSET, struct mlx5dv_pd, pdn);
    VALUE(Mlx5dvDevxDescriptor, OBJ_PD, MLX5DV_OBJ_PD);

    SIZE(Mlx5dvObjDescriptor, struct mlx5dv_obj);
    OFF(Mlx5dvObjDescriptor, QP_IN_OFFSET, struct mlx5dv_obj, qp.in);
    OFF(Mlx5dvObjDescriptor, QP_OUT_OFFSET, struct mlx5dv_obj, qp.out);
    OFF(Mlx5dvObjDescriptor, CQ_IN_OFFSET, struct mlx5dv_obj, cq.in);
    OFF(Mlx5dvObjDescriptor, CQ_OUT_OFFSET, struct mlx5dv_obj, cq.out);
    VALUE(Mlx5dvObjDescriptor, OBJ_QP, MLX5DV_OBJ_QP);
    VALUE(Mlx5dvObjDescriptor, OBJ_CQ, MLX5DV_OBJ_CQ);
}

static void constants(void)
{
    VALUE(VerbsConstants, IBV_QPS_RESET, IBV_QPS_RESET);
    VALUE(VerbsConstants, IBV_QPS_INIT, IBV_QPS_INIT);
    VALUE(VerbsConstants, IBV_QPS_RTR, IBV_QPS_RTR);
    VALUE(VerbsConstants, IBV_QPS_RTS, IBV_QPS_RTS);
    VALUE(VerbsConstants, IBV_QPS_SQD, IBV_QPS_SQD);
    VALUE(VerbsConstants, IBV_QPS_SQE, IBV_QPS_SQE);
    VALUE(VerbsConstants, IBV_QPS_ERR, IBV_QPS_ERR);
    VALUE(VerbsConstants, IBV_QPS_UNKNOWN, IBV_QPS_UNKNOWN);
    VALUE(VerbsConstants, IBV_QPT_RC, IBV_QPT_RC);

    VALUE(VerbsConstants, IBV_QP_STATE, IBV_QP_STATE);
    VALUE(VerbsConstants, IBV_QP_ACCESS_FLAGS, IBV_QP_ACCESS_FLAGS);
    VALUE(VerbsConstants, IBV_QP_PKEY_INDEX, IBV_QP_PKEY_INDEX);
    VALUE(VerbsConstants, IBV_QP_PORT, IBV_QP_PORT);
    VALUE(VerbsConstants, IBV_QP_AV, IBV_QP_AV);
    VALUE(VerbsConstants, IBV_QP_PATH_MTU, IBV_QP_PATH_MTU);
    VALUE(VerbsConstants, IBV_QP_TIMEOUT, IBV_QP_TIMEOUT);
    VALUE(VerbsConstants, IBV_QP_RETRY_CNT, IBV_QP_RETRY_CNT);
    VALUE(VerbsConstants, IBV_QP_RNR_RETRY, IBV_QP_RNR_RETRY);
    VALUE(VerbsConstants, IBV_QP_RQ_PSN, IBV_QP_RQ_PSN);
    VALUE(VerbsConstants, IBV_QP_MAX_QP_RD_ATOMIC, IBV_QP_MAX_QP_RD_ATOMIC);
    VALUE(VerbsConstants, IBV_QP_MIN_RNR_TIMER, IBV_QP_MIN_RNR_TIMER);
    VALUE(VerbsConstants, IBV_QP_SQ_PSN, IBV_QP_SQ_PSN);
    VALUE(VerbsConstants, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC);
    VALUE(VerbsConstants, IBV_QP_DEST_QPN, IBV_QP_DEST_QPN);

    VALUE(VerbsConstants, IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE);
    VALUE(VerbsConstants, IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_WRITE);
    VALUE(VerbsConstants, IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_READ);
    VALUE(VerbsConstants, IBV_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_REMOTE_ATOMIC);
    VALUE(VerbsConstants, IBV_ACCESS_RELAXED_ORDERING, IBV_ACCESS_RELAXED_ORDERING);
    VALUE(VerbsConstants, IBV_ACCESS_OPTIONAL_RANGE, IBV_ACCESS_OPTIONAL_RANGE);

    VALUE(VerbsConstants, IBV_MTU_256, IBV_MTU_256);
    VALUE(VerbsConstants, IBV_MTU_512, IBV_MTU_512);
    VALUE(VerbsConstants, IBV_MTU_1024, IBV_MTU_1024);
    VALUE(VerbsConstants, IBV_MTU_2048, IBV_MTU_2048);
    VALUE(VerbsConstants, IBV_MTU_4096, IBV_MTU_4096);

    VALUE(VerbsConstants, IBV_PORT_NOP, IBV_PORT_NOP);
    VALUE(VerbsConstants, IBV_PORT_DOWN, IBV_PORT_DOWN);
    VALUE(VerbsConstants, IBV_PORT_INIT, IBV_PORT_INIT);
    VALUE(VerbsConstants, IBV_PORT_ARMED, IBV_PORT_ARMED);
    VALUE(VerbsConstants, IBV_PORT_ACTIVE, IBV_PORT_ACTIVE);
    VALUE(VerbsConstants, IBV_PORT_ACTIVE_DEFER, IBV_PORT_ACTIVE_DEFER);

    VALUE(VerbsConstants, IBV_LINK_LAYER_UNSPECIFIED, IBV_LINK_LAYER_UNSPECIFIED);
    VALUE(VerbsConstants, IBV_LINK_LAYER_INFINIBAND, IBV_LINK_LAYER_INFINIBAND);
    VALUE(VerbsConstants, IBV_LINK_LAYER_ETHERNET, IBV_LINK_LAYER_ETHERNET);

    VALUE(VerbsConstants, POINTER_SIZE, sizeof(void *));
    VALUE(VerbsConstants, SIZE_T_SIZE, sizeof(size_t));
}

int main(void)
{
    device_and_port();
    queue_pairs();
    memory_and_queues();
    work_requests();
    mlx5dv();
    constants();
    return 0;
}

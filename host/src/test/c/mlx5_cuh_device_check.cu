// Mlx5CuhTest compiles this with nvcc -std=c++17 -arch=sm_90 -x cu -c: every device function of gda4j/layout/mlx5.cuh
// must compile and assemble (ptxas) for Hopper, including the ordered and MMIO stores written in inline PTX.
#include <gda4j/layout/mlx5.cuh>

using namespace gda4j::mlx5;

__global__ void gda4j_mlx5_device_check(uint8_t *sq, uint32_t wqebbs, uint64_t pi, uint32_t qpn, void *dbrec,
                                        void *uar, const void *cqe, uint64_t *out, const uint8_t *payload,
                                        uint32_t length) {
    uint64_t index = pi;
    index += write_nop(sq, wqebbs, index, qpn, WqeDescriptor::FM_CE_SE_CQ_UPDATE);
    index += write_rdma_write(sq, wqebbs, index, qpn, 0, 0x1000, 1, 0x2000, 2, 64);
    index += write_rdma_write_imm(sq, wqebbs, index, qpn, 0, 0xdeadbeef, 0x1000, 1, 0x2000, 2, 64);
    index += write_rdma_read(sq, wqebbs, index, qpn, 0, 0x1000, 1, 0x2000, 2, 64);
    index += write_rdma_write_inline(sq, wqebbs, index, qpn, 0, 0x1000, 1, payload, length);
    index += write_atomic_fetch_add(sq, wqebbs, index, qpn, 0, 0x1000, 1, 1, 0, 3);
    index += write_atomic_compare_swap(sq, wqebbs, index, qpn, WqeDescriptor::FM_CE_SE_FENCE, 0x1000, 1, 0, 1, 0,
                                       3);
    store_dbr_send_counter_release(dbrec, index);
    __threadfence_system();
    store_doorbell_mmio(uar, index, qpn);
    uint64_t tail = load_cqe_tail_acquire(cqe);
    out[0] = cqe_tail_is_fresh(tail, pi, 64) ? cqe_tail_wqe_counter(tail) : be64(tail);
    out[1] = (uint64_t)cqe_tail_qpn(tail) << 8 | cqe_tail_s_wqe_opcode(tail);
}

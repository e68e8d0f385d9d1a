// gda4j/layout/mlx5.cuh: the device-side mirror of io.gda4j.mlx5 (WqeDescriptor, Mlx5Opcode, CqeDescriptor, CqeOpcode,
// DoorbellRecordDescriptor, DoorbellDescriptor). Same names, same values, same bytes: the Java golden tests check
// the Java side against rdma-core's <infiniband/mlx5dv.h>, and Mlx5CuhTest checks this header against the Java
// side (host build of these functions) and that it compiles for sm_90.
//
// Everything mlx5 puts on the wire or in a queue is big-endian; GPUs are little-endian, so each word is swapped
// with __byte_perm (one PRMT instruction) and a 16-byte segment is written with one 16-byte store.
//
// Ordering contract for posting (docs/ARCHITECTURE.md, "IBGDA on mlx5"):
//   1. write the WQE segments (plain stores, write_* below);
//   2. store_dbr_send_counter_release(): st.release.sys, so the WQE is visible before the new producer index;
//   3. __threadfence_system(), then store_doorbell_mmio(): the NIC fetches the WQEs after it sees the doorbell.
// The emulated NIC's engine thread pairs with step 3 through DoorbellDescriptor.getDoorbellAcquire (it acts on the
// doorbell, a stand-in page in mapped memory, and checks the doorbell record against it).
//
// Header-only, no dependency on other gda4j headers. Functions are __host__ __device__ where they only compute
// or store plain bytes (so the host build can be checked against the Java encoder); the ordered stores and loads
// are __device__ only.
#pragma once

#include <stdint.h>
#include <vector_types.h>

#if defined(__CUDACC__)
#define GDA4J_MLX5_FN __host__ __device__ __forceinline__
#else
#define GDA4J_MLX5_FN inline
#endif

namespace gda4j {
namespace mlx5 {

// ---- io.gda4j.mlx5.WqeDescriptor ------------------------------------------------------------------------------
namespace WqeDescriptor {
constexpr uint32_t WQEBB_SIZE = 64;
constexpr uint32_t WQEBB_SHIFT = 6;
constexpr uint32_t SEGMENT_SIZE = 16;
constexpr uint32_t SEGMENTS_PER_WQEBB = WQEBB_SIZE / SEGMENT_SIZE;
constexpr uint32_t DS_MASK = 0x3f;
constexpr uint32_t MAX_DS = DS_MASK;
constexpr uint32_t MAX_WQEBBS = (MAX_DS + SEGMENTS_PER_WQEBB - 1) / SEGMENTS_PER_WQEBB;

constexpr uint32_t CTRL_SIZE = 16;
constexpr uint32_t CTRL_OPMOD_IDX_OPCODE_OFFSET = 0;
constexpr uint32_t CTRL_QPN_DS_OFFSET = 4;
constexpr uint32_t CTRL_SIGNATURE_OFFSET = 8;
constexpr uint32_t CTRL_DCI_STREAM_CHANNEL_ID_OFFSET = 9;
constexpr uint32_t CTRL_FM_CE_SE_OFFSET = 11;
constexpr uint32_t CTRL_IMM_OFFSET = 12;

constexpr uint32_t OPMOD_SHIFT = 24;
constexpr uint32_t WQE_INDEX_SHIFT = 8;
constexpr uint32_t WQE_INDEX_MASK = 0xffff;
constexpr uint32_t OPCODE_MASK = 0xff;
constexpr uint32_t QPN_SHIFT = 8;
constexpr uint32_t QPN_MASK = 0xffffff;

constexpr uint8_t FM_CE_SE_SOLICITED = 0x02;
constexpr uint8_t FM_CE_SE_CQ_UPDATE = 0x08;
constexpr uint8_t FM_CE_SE_SMALL_FENCE = 0x20;
constexpr uint8_t FM_CE_SE_FENCE = 0x80;

constexpr uint32_t RADDR_SIZE = 16;
constexpr uint32_t RADDR_RADDR_OFFSET = 0;
constexpr uint32_t RADDR_RKEY_OFFSET = 8;
constexpr uint32_t RADDR_RESERVED_OFFSET = 12;

constexpr uint32_t DATA_SIZE = 16;
constexpr uint32_t DATA_BYTE_COUNT_OFFSET = 0;
constexpr uint32_t DATA_LKEY_OFFSET = 4;
constexpr uint32_t DATA_ADDR_OFFSET = 8;

constexpr uint32_t INLINE_HEADER_SIZE = 4;
constexpr uint32_t INLINE_BYTE_COUNT_OFFSET = 0;
constexpr uint32_t INLINE_SEG = 0x80000000u;
constexpr uint32_t INLINE_BYTE_COUNT_MASK = 0x7fffffffu;

constexpr uint32_t ATOMIC_SIZE = 16;
constexpr uint32_t ATOMIC_SWAP_ADD_OFFSET = 0;
constexpr uint32_t ATOMIC_COMPARE_OFFSET = 8;
constexpr uint32_t ATOMIC_OPERAND_BYTES = 8;

constexpr uint32_t CTRL_SEGMENT = 0;
constexpr uint32_t RADDR_SEGMENT = 1;
constexpr uint32_t RDMA_DATA_SEGMENT = 2;
constexpr uint32_t INLINE_SEGMENT = 2;
constexpr uint32_t ATOMIC_SEGMENT = 2;
constexpr uint32_t ATOMIC_DATA_SEGMENT = 3;

constexpr uint32_t NOP_DS = 1;
constexpr uint32_t RDMA_DS = 3;
constexpr uint32_t ATOMIC_DS = 4;

constexpr uint32_t MAX_INLINE_BYTES = (MAX_DS - INLINE_SEGMENT) * SEGMENT_SIZE - INLINE_HEADER_SIZE;

GDA4J_MLX5_FN uint32_t wqebbs_for_ds(uint32_t ds) { return (ds + SEGMENTS_PER_WQEBB - 1) / SEGMENTS_PER_WQEBB; }

GDA4J_MLX5_FN uint32_t inline_ds(uint32_t length) {
    return INLINE_SEGMENT + (INLINE_HEADER_SIZE + length + SEGMENT_SIZE - 1) / SEGMENT_SIZE;
}

// Byte offset of the WQEBB that counter wqe_index maps to, in a ring of wqebb_count (a power of two).
GDA4J_MLX5_FN uint32_t wqebb_offset(uint64_t wqe_index, uint32_t wqebb_count) {
    return (uint32_t)(wqe_index & (wqebb_count - 1)) << WQEBB_SHIFT;
}

// Byte offset of segment `segment` of the WQE starting at wqe_index: segments never straddle a WQEBB, WQEBBs wrap.
GDA4J_MLX5_FN uint32_t segment_offset(uint64_t wqe_index, uint32_t segment, uint32_t wqebb_count) {
    return wqebb_offset(wqe_index + segment / SEGMENTS_PER_WQEBB, wqebb_count)
           + (segment % SEGMENTS_PER_WQEBB) * SEGMENT_SIZE;
}

GDA4J_MLX5_FN uint32_t opmod_idx_opcode(uint32_t opmod, uint64_t wqe_index, uint32_t opcode) {
    return (opmod << OPMOD_SHIFT) | ((uint32_t)(wqe_index & WQE_INDEX_MASK) << WQE_INDEX_SHIFT)
           | (opcode & OPCODE_MASK);
}

GDA4J_MLX5_FN uint32_t qpn_ds(uint32_t qpn, uint32_t ds) { return (qpn << QPN_SHIFT) | (ds & 0xff); }
}  // namespace WqeDescriptor

// ---- io.gda4j.mlx5.Mlx5Opcode ---------------------------------------------------------------------------------
namespace Mlx5Opcode {
constexpr uint8_t NOP = 0x00;
constexpr uint8_t RDMA_WRITE = 0x08;
constexpr uint8_t RDMA_WRITE_IMM = 0x09;
constexpr uint8_t SEND = 0x0a;
constexpr uint8_t SEND_IMM = 0x0b;
constexpr uint8_t RDMA_READ = 0x10;
constexpr uint8_t ATOMIC_CS = 0x11;
constexpr uint8_t ATOMIC_FA = 0x12;
constexpr uint8_t ATOMIC_MASKED_CS = 0x14;
constexpr uint8_t ATOMIC_MASKED_FA = 0x15;
constexpr uint8_t OPMOD_MASKED_ATOMIC_4_BYTES = 0x08;
constexpr uint8_t OPMOD_MASKED_ATOMIC_8_BYTES = 0x09;
}  // namespace Mlx5Opcode

// ---- io.gda4j.mlx5.CqeDescriptor / CqeOpcode ------------------------------------------------------------------
namespace CqeDescriptor {
constexpr uint32_t CQE_SIZE = 64;
constexpr uint32_t CQE_SHIFT = 6;
constexpr uint32_t SRQN_UIDX_OFFSET = 32;
constexpr uint32_t IMM_INVAL_PKEY_OFFSET = 36;
constexpr uint32_t BYTE_CNT_OFFSET = 44;
constexpr uint32_t TIMESTAMP_OFFSET = 48;
constexpr uint32_t VENDOR_ERR_SYND_OFFSET = 54;
constexpr uint32_t SYNDROME_OFFSET = 55;
constexpr uint32_t SOP_DROP_QPN_OFFSET = 56;
constexpr uint32_t S_WQE_OPCODE_OFFSET = 56;
constexpr uint32_t WQE_COUNTER_OFFSET = 60;
constexpr uint32_t SIGNATURE_OFFSET = 62;
constexpr uint32_t OP_OWN_OFFSET = 63;
constexpr uint32_t TAIL_OFFSET = 56;
constexpr uint32_t QPN_MASK = 0xffffff;
constexpr uint32_t S_WQE_OPCODE_SHIFT = 24;
constexpr uint32_t OPCODE_SHIFT = 4;
constexpr uint32_t OWNER_MASK = 1;
}  // namespace CqeDescriptor

namespace CqeOpcode {
constexpr uint8_t REQ = 0;
constexpr uint8_t RESP_WR_IMM = 1;
constexpr uint8_t RESP_SEND = 2;
constexpr uint8_t RESP_SEND_IMM = 3;
constexpr uint8_t RESP_SEND_INV = 4;
constexpr uint8_t RESIZE_CQ = 5;
constexpr uint8_t NO_PACKET = 6;
constexpr uint8_t SIG_ERR = 12;
constexpr uint8_t REQ_ERR = 13;
constexpr uint8_t RESP_ERR = 14;
constexpr uint8_t INVALID = 15;
}  // namespace CqeOpcode

// ---- io.gda4j.mlx5.DoorbellRecordDescriptor / DoorbellDescriptor -----------------------------------------------
namespace DoorbellRecordDescriptor {
constexpr uint32_t SIZE = 8;
constexpr uint32_t RCV_DBR = 0;
constexpr uint32_t SND_DBR = 1;
constexpr uint32_t RECEIVE_COUNTER_OFFSET = RCV_DBR * 4;
constexpr uint32_t SEND_COUNTER_OFFSET = SND_DBR * 4;
constexpr uint32_t COUNTER_MASK = 0xffff;
}  // namespace DoorbellRecordDescriptor

namespace DoorbellDescriptor {
constexpr uint32_t SIZE = 8;
constexpr uint32_t PRODUCER_INDEX_OFFSET = 0;
constexpr uint32_t QPN_OFFSET = 4;
}  // namespace DoorbellDescriptor

// ---- byte order -----------------------------------------------------------------------------------------------

// Host order to big-endian (and back: the swap is its own inverse).
GDA4J_MLX5_FN uint32_t be32(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return __byte_perm(x, 0, 0x0123);
#else
    return __builtin_bswap32(x);
#endif
}

// The two halves swapped and each byte-swapped: the 8 bytes in memory are the big-endian x.
GDA4J_MLX5_FN uint64_t be64(uint64_t x) {
    return ((uint64_t)be32((uint32_t)x) << 32) | be32((uint32_t)(x >> 32));
}

// ---- segments (each one 16-byte store; `seg` must be 16-byte aligned, as every segment in a WQEBB is) -----------

GDA4J_MLX5_FN void store_segment(void *seg, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) {
    uint4 words;
    words.x = w0;
    words.y = w1;
    words.z = w2;
    words.w = w3;
    *reinterpret_cast<uint4 *>(seg) = words;
}

// struct mlx5_wqe_ctrl_seg: as mlx5dv_set_ctrl_seg with signature 0; imm is the host value (sent big-endian).
GDA4J_MLX5_FN void write_ctrl_seg(void *seg, uint8_t opcode, uint8_t opmod, uint64_t wqe_index, uint32_t qpn,
                                  uint8_t ds, uint8_t fm_ce_se, uint32_t imm) {
    // Word 2 is signature | dci_stream_channel_id | fm_ce_se: fm_ce_se is its low byte.
    store_segment(seg, be32(WqeDescriptor::opmod_idx_opcode(opmod, wqe_index, opcode)),
                  be32(WqeDescriptor::qpn_ds(qpn, ds)), be32(fm_ce_se), be32(imm));
}

// struct mlx5_wqe_raddr_seg.
GDA4J_MLX5_FN void write_raddr_seg(void *seg, uint64_t raddr, uint32_t rkey) {
    store_segment(seg, be32((uint32_t)(raddr >> 32)), be32((uint32_t)raddr), be32(rkey), 0);
}

// struct mlx5_wqe_data_seg, as mlx5dv_set_data_seg.
GDA4J_MLX5_FN void write_data_seg(void *seg, uint32_t byte_count, uint32_t lkey, uint64_t addr) {
    store_segment(seg, be32(byte_count), be32(lkey), be32((uint32_t)(addr >> 32)), be32((uint32_t)addr));
}

// struct mlx5_wqe_atomic_seg.
GDA4J_MLX5_FN void write_atomic_seg(void *seg, uint64_t swap_add, uint64_t compare) {
    store_segment(seg, be32((uint32_t)(swap_add >> 32)), be32((uint32_t)swap_add), be32((uint32_t)(compare >> 32)),
                  be32((uint32_t)compare));
}

// struct mlx5_wqe_inl_data_seg and its payload, from segment INLINE_SEGMENT on, zero padded to a whole segment,
// following the ring wrap. Each segment is assembled in registers and written with one 16-byte store.
GDA4J_MLX5_FN void write_inline_segs(uint8_t *sq_buf, uint32_t wqebb_count, uint64_t wqe_index,
                                     const uint8_t *payload, uint32_t length) {
    using namespace WqeDescriptor;
    uint32_t ds = inline_ds(length);
    uint32_t taken = 0;
    for (uint32_t s = INLINE_SEGMENT; s < ds; ++s) {
        uint8_t bytes[SEGMENT_SIZE];
        uint32_t first = 0;
        if (s == INLINE_SEGMENT) {
            uint32_t header = be32(length | INLINE_SEG);
            for (uint32_t i = 0; i < INLINE_HEADER_SIZE; ++i) {
                bytes[i] = (uint8_t)(header >> (8 * i));
            }
            first = INLINE_HEADER_SIZE;
        }
        for (uint32_t i = first; i < SEGMENT_SIZE; ++i) {
            bytes[i] = taken < length ? payload[taken] : 0;
            ++taken;
        }
        uint32_t w[4];
        for (uint32_t k = 0; k < 4; ++k) {
            w[k] = (uint32_t)bytes[4 * k] | (uint32_t)bytes[4 * k + 1] << 8 | (uint32_t)bytes[4 * k + 2] << 16
                   | (uint32_t)bytes[4 * k + 3] << 24;
        }
        store_segment(sq_buf + segment_offset(wqe_index, s, wqebb_count), w[0], w[1], w[2], w[3]);
    }
}

// ---- whole WQEs (io.gda4j.mlx5.WqeEncoder); each returns the WQEBBs used -----------------------------------------
// sq_buf: the send queue ring (mlx5dv_qp.sq.buf), wqebb_count: its size in WQEBBs (sq.wqe_cnt), wqe_index: the
// free-running producer counter.

GDA4J_MLX5_FN uint32_t write_nop(uint8_t *sq_buf, uint32_t wqebb_count, uint64_t wqe_index, uint32_t qpn,
                                 uint8_t fm_ce_se) {
    using namespace WqeDescriptor;
    write_ctrl_seg(sq_buf + segment_offset(wqe_index, CTRL_SEGMENT, wqebb_count), Mlx5Opcode::NOP, 0, wqe_index,
                   qpn, NOP_DS, fm_ce_se, 0);
    return 1;
}

GDA4J_MLX5_FN uint32_t write_rdma(uint8_t *sq_buf, uint32_t wqebb_count, uint64_t wqe_index, uint8_t opcode,
                                  uint32_t qpn, uint8_t fm_ce_se, uint32_t imm, uint64_t raddr, uint32_t rkey,
                                  uint64_t laddr, uint32_t lkey, uint32_t byte_count) {
    using namespace WqeDescriptor;
    write_ctrl_seg(sq_buf + segment_offset(wqe_index, CTRL_SEGMENT, wqebb_count), opcode, 0, wqe_index, qpn,
                   RDMA_DS, fm_ce_se, imm);
    write_raddr_seg(sq_buf + segment_offset(wqe_index, RADDR_SEGMENT, wqebb_count), raddr, rkey);
    write_data_seg(sq_buf + segment_offset(wqe_index, RDMA_DATA_SEGMENT, wqebb_count), byte_count, lkey, laddr);
    return 1;
}

GDA4J_MLX5_FN uint32_t write_rdma_write(uint8_t *sq_buf, uint32_t wqebb_count, uint64_t wqe_index, uint32_t qpn,
                                        uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey, uint64_t laddr,
                                        uint32_t lkey, uint32_t byte_count) {
    return write_rdma(sq_buf, wqebb_count, wqe_index, Mlx5Opcode::RDMA_WRITE, qpn, fm_ce_se, 0, raddr, rkey, laddr,
                      lkey, byte_count);
}

GDA4J_MLX5_FN uint32_t write_rdma_write_imm(uint8_t *sq_buf, uint32_t wqebb_count, uint64_t wqe_index,
                                            uint32_t qpn, uint8_t fm_ce_se, uint32_t imm, uint64_t raddr,
                                            uint32_t rkey, uint64_t laddr, uint32_t lkey, uint32_t byte_count) {
    return write_rdma(sq_buf, wqebb_count, wqe_index, Mlx5Opcode::RDMA_WRITE_IMM, qpn, fm_ce_se, imm, raddr, rkey,
                      laddr, lkey, byte_count);
}

GDA4J_MLX5_FN uint32_t write_rdma_read(uint8_t *sq_buf, uint32_t wqebb_count, uint64_t wqe_index, uint32_t qpn,
                                       uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey, uint64_t laddr,
                                       uint32_t lkey, uint32_t byte_count) {
    return write_rdma(sq_buf, wqebb_count, wqe_index, Mlx5Opcode::RDMA_READ, qpn, fm_ce_se, 0, raddr, rkey, laddr,
                      lkey, byte_count);
}

// length must be at most WqeDescriptor::MAX_INLINE_BYTES and the QP's max_inline_data.
GDA4J_MLX5_FN uint32_t write_rdma_write_inline(uint8_t *sq_buf, uint32_t wqebb_count, uint64_t wqe_index,
                                               uint32_t qpn, uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
                                               const uint8_t *payload, uint32_t length) {
    using namespace WqeDescriptor;
    uint32_t ds = inline_ds(length);
    write_ctrl_seg(sq_buf + segment_offset(wqe_index, CTRL_SEGMENT, wqebb_count), Mlx5Opcode::RDMA_WRITE, 0,
                   wqe_index, qpn, (uint8_t)ds, fm_ce_se, 0);
    write_raddr_seg(sq_buf + segment_offset(wqe_index, RADDR_SEGMENT, wqebb_count), raddr, rkey);
    write_inline_segs(sq_buf, wqebb_count, wqe_index, payload, length);
    return wqebbs_for_ds(ds);
}

GDA4J_MLX5_FN uint32_t write_atomic(uint8_t *sq_buf, uint32_t wqebb_count, uint64_t wqe_index, uint8_t opcode,
                                    uint32_t qpn, uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
                                    uint64_t swap_add, uint64_t compare, uint64_t laddr, uint32_t lkey) {
    using namespace WqeDescriptor;
    write_ctrl_seg(sq_buf + segment_offset(wqe_index, CTRL_SEGMENT, wqebb_count), opcode, 0, wqe_index, qpn,
                   ATOMIC_DS, fm_ce_se, 0);
    write_raddr_seg(sq_buf + segment_offset(wqe_index, RADDR_SEGMENT, wqebb_count), raddr, rkey);
    write_atomic_seg(sq_buf + segment_offset(wqe_index, ATOMIC_SEGMENT, wqebb_count), swap_add, compare);
    write_data_seg(sq_buf + segment_offset(wqe_index, ATOMIC_DATA_SEGMENT, wqebb_count), ATOMIC_OPERAND_BYTES, lkey,
                   laddr);
    return 1;
}

// 8-byte fetch-and-add; the old value lands at laddr/lkey (a null MR's lkey drops it).
GDA4J_MLX5_FN uint32_t write_atomic_fetch_add(uint8_t *sq_buf, uint32_t wqebb_count, uint64_t wqe_index,
                                              uint32_t qpn, uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
                                              uint64_t add, uint64_t laddr, uint32_t lkey) {
    return write_atomic(sq_buf, wqebb_count, wqe_index, Mlx5Opcode::ATOMIC_FA, qpn, fm_ce_se, raddr, rkey, add, 0,
                        laddr, lkey);
}

GDA4J_MLX5_FN uint32_t write_atomic_compare_swap(uint8_t *sq_buf, uint32_t wqebb_count, uint64_t wqe_index,
                                                 uint32_t qpn, uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
                                                 uint64_t compare, uint64_t swap, uint64_t laddr, uint32_t lkey) {
    return write_atomic(sq_buf, wqebb_count, wqe_index, Mlx5Opcode::ATOMIC_CS, qpn, fm_ce_se, raddr, rkey, swap,
                        compare, laddr, lkey);
}

// ---- doorbell record and doorbell -----------------------------------------------------------------------------

// The send counter word (dbrec[SND_DBR]) for producer index pi, as it lies in memory: BE32(pi & 0xffff).
GDA4J_MLX5_FN uint32_t dbr_send_counter(uint64_t pi) {
    return be32((uint32_t)(pi & DoorbellRecordDescriptor::COUNTER_MASK));
}

// The 8-byte doorbell {BE32(pi << 8), BE32(qpn << 8)} as a little-endian uint64 (the first word in the low half),
// i.e. the first 8 bytes of a ctrl segment with opmod, opcode and ds zero.
GDA4J_MLX5_FN uint64_t doorbell_value(uint64_t pi, uint32_t qpn) {
    return (uint64_t)be32(WqeDescriptor::opmod_idx_opcode(0, pi, 0))
           | (uint64_t)be32(WqeDescriptor::qpn_ds(qpn & WqeDescriptor::QPN_MASK, 0)) << 32;
}

#if defined(__CUDACC__)
// Publishes producer index pi: a release store at system scope, so the WQEs written before it are visible to the
// NIC, which reads the record after the doorbell (the emulated engine checks that it covers the doorbell).
__device__ __forceinline__ void store_dbr_send_counter_release(void *dbrec, uint64_t pi) {
    uint32_t *word = reinterpret_cast<uint32_t *>(static_cast<uint8_t *>(dbrec)
                                                  + DoorbellRecordDescriptor::SEND_COUNTER_OFFSET);
    asm volatile("st.release.sys.b32 [%0], %1;" ::"l"(word), "r"(dbr_send_counter(pi)) : "memory");
}

// Rings the NIC: one 8-byte MMIO store to the UAR/BlueFlame register (mlx5dv_qp.bf.reg, mapped into the GPU), or to
// the emulated NIC's stand-in page in mapped host memory (the same store: the engine polls that word).
// Callers fence (__threadfence_system) after the doorbell record store and hold the QP's doorbell lock.
__device__ __forceinline__ void store_doorbell_mmio(void *uar, uint64_t pi, uint32_t qpn) {
    asm volatile("st.mmio.relaxed.sys.global.b64 [%0], %1;" ::"l"(uar), "l"(doorbell_value(pi, qpn)) : "memory");
}

// ---- CQE polling ----------------------------------------------------------------------------------------------

// Acquire load of a CQE's last 8 bytes (s_wqe_opcode, qpn, wqe_counter, signature, op_own), which the NIC writes
// last: after it shows a fresh owner bit, the rest of the CQE may be read with plain loads.
__device__ __forceinline__ uint64_t load_cqe_tail_acquire(const void *cqe) {
    uint64_t tail;
    asm volatile("ld.acquire.sys.b64 %0, [%1];"
                 : "=l"(tail)
                 : "l"(static_cast<const uint8_t *>(cqe) + CqeDescriptor::TAIL_OFFSET)
                 : "memory");
    return tail;
}
#endif

// Fields of a tail as loaded above (little-endian uint64 of bytes 56..63).
GDA4J_MLX5_FN uint32_t cqe_tail_op_own(uint64_t tail) { return (uint32_t)(tail >> 56); }
GDA4J_MLX5_FN uint32_t cqe_tail_opcode(uint64_t tail) { return cqe_tail_op_own(tail) >> CqeDescriptor::OPCODE_SHIFT; }
GDA4J_MLX5_FN uint32_t cqe_tail_owner(uint64_t tail) { return cqe_tail_op_own(tail) & CqeDescriptor::OWNER_MASK; }
GDA4J_MLX5_FN uint32_t cqe_tail_wqe_counter(uint64_t tail) {
    return ((uint32_t)(tail >> 32) & 0xff) << 8 | ((uint32_t)(tail >> 40) & 0xff);
}
GDA4J_MLX5_FN uint32_t cqe_tail_qpn(uint64_t tail) {
    return be32((uint32_t)tail) & CqeDescriptor::QPN_MASK;
}
GDA4J_MLX5_FN uint32_t cqe_tail_s_wqe_opcode(uint64_t tail) { return (uint32_t)tail & 0xff; }

// Owner bit a fresh CQE carries at consumer counter n of a ring of cqe_count (a power of two).
GDA4J_MLX5_FN uint32_t cqe_owner_bit(uint64_t n, uint32_t cqe_count) { return (n & cqe_count) != 0 ? 1 : 0; }

// Whether the CQE with this tail, at consumer counter n, is new (written by the NIC on this pass of the ring).
GDA4J_MLX5_FN bool cqe_tail_is_fresh(uint64_t tail, uint64_t n, uint32_t cqe_count) {
    return cqe_tail_opcode(tail) != CqeOpcode::INVALID && cqe_tail_owner(tail) == cqe_owner_bit(n, cqe_count);
}

}  // namespace mlx5
}  // namespace gda4j

// gda4j/ibgda.cuh: GPU-initiated posting on an mlx5 queue pair (a real NIC or the emulated NIC; same bytes).
// struct DeviceQp mirrors io.gda4j.ibgda.DeviceQpDescriptor field for field (same names, same offsets).
//
//  line 0: rings (host-written once, read-only for kernels)
//   0                 8                 16                24                32                40
//   +-----------------+-----------------+-----------------+-----------------+-----------------+
//   | sq_buf          | dbrec           | doorbell        | cq_buf          | cq_dbrec        |
//   +-----------------+-----------------+-----------------+-----------------+-----------------+
//   40                48       52       56       60       64
//   +-----------------+--------+--------+--------+--------+
//   | wqe_sizes       |sq_wqebb|cqe_cnt | qpn    | flags  |
//   +-----------------+--------+--------+--------+--------+
//  line 1: addressing and flush (host-written once, read-only for kernels)
//   64                72                80                88       92       96
//   +-----------------+-----------------+-----------------+--------+--------+
//   | local_base      | remote_base     | heap_size_bytes | lkey   | rkey   |
//   +-----------------+-----------------+-----------------+--------+--------+
//   96                104               112      116      120      124      128
//   +-----------------+-----------------+--------+--------+--------+--------+
//   | flush_qp        | flush_flag      |flush_rk|null_lk |max_inl | peer   |
//   +-----------------+-----------------+--------+--------+--------+--------+
//  line 2: producer state (kernels only; zero at start)
//   128               136               144               152      156      160 .. 192
//   +-----------------+-----------------+-----------------+--------+--------+---------+
//   | resv_head       | ready_head      | prod_idx        | db_lock| resvd  | reserved|
//   +-----------------+-----------------+-----------------+--------+--------+---------+
//  line 3: consumer state (kernels only; zero at start)
//   192               200               208      212      216 .. 256
//   +-----------------+-----------------+--------+--------+-----------+
//   | cons_head       | cq_ci           |poll_lck| error  | reserved  |
//   +-----------------+-----------------+--------+--------+-----------+
#pragma once
#include <stdint.h>

namespace gda4j {
namespace ibgda {

// DeviceQp.flags (io.gda4j.ibgda.DeviceQpDescriptor.FLAG_*).
constexpr uint32_t FLAG_DOORBELL_MEMORY = 1u;
constexpr uint32_t FLAG_FLUSH_ON_QUIET = 1u << 1;
// DeviceQp.error: ERROR_SET | cqe_opcode << 16 | vendor_syndrome << 8 | syndrome.
constexpr uint32_t ERROR_SET = 1u << 31;

struct DeviceQp {
  // line 0: rings, as this GPU addresses them
  uint64_t sq_buf;           // send queue ring, sq_wqebbs * 64 bytes
  uint64_t dbrec;            // 8-byte doorbell record; send counter = BE32(pi & 0xffff) in word 1
  uint64_t doorbell;         // 8-byte doorbell register (UAR, or a pinned host word: FLAG_DOORBELL_MEMORY)
  uint64_t cq_buf;           // send CQ ring, cqe_count * 64 bytes
  uint64_t cq_dbrec;         // CQ doorbell record; consumer index = BE32(ci & 0xffffff) in word 0
  uint64_t wqe_sizes;        // GPU memory, sq_wqebbs bytes: WQEBBs of the WQE starting at each slot
  uint32_t sq_wqebbs;        // power of two
  uint32_t cqe_count;        // power of two, >= sq_wqebbs
  uint32_t qpn;
  uint32_t flags;
  // line 1: addressing and flush
  uint64_t local_base;       // NIC address of this rank's heap (local data segments)
  uint64_t remote_base;      // NIC address of the peer's heap (raddr segments)
  uint64_t heap_size_bytes;
  uint32_t lkey;
  uint32_t rkey;
  uint64_t flush_qp;         // DeviceQp* of the loopback flush QP, 0 = none
  uint64_t flush_flag;       // NIC address of the GPU word the flush ATOMIC_FA adds to
  uint32_t flush_rkey;
  uint32_t null_lkey;        // null MR: the flush atomic's fetched value is dropped
  uint32_t max_inline;
  int32_t peer;              // peer rank, for error records
  // line 2: producer state
  uint64_t resv_head;        // WQEBBs reserved (atomicAdd)
  uint64_t ready_head;       // WQEBBs published in reservation order (CAS)
  uint64_t prod_idx;         // producer index last stored to the doorbell record (under db_lock)
  uint32_t db_lock;
  uint32_t reserved0;
  uint64_t reserved1[4];
  // line 3: consumer state
  uint64_t cons_head;        // WQEBBs retired by CQEs
  uint64_t cq_ci;            // CQEs consumed
  uint32_t poll_lock;
  uint32_t error;            // 0, or the first error CQE (ERROR_SET | ...)
  uint64_t reserved2[5];
};

static_assert(sizeof(DeviceQp) == 256, "DeviceQp is 256 bytes");
static_assert(__builtin_offsetof(DeviceQp, local_base) == 64, "DeviceQp line 1 at 64");
static_assert(__builtin_offsetof(DeviceQp, resv_head) == 128, "DeviceQp line 2 at 128");
static_assert(__builtin_offsetof(DeviceQp, cons_head) == 192, "DeviceQp line 3 at 192");

}  // namespace ibgda
}  // namespace gda4j

// gda4j/transport/ibgda/device_qp.cuh: the state of one mlx5 queue pair that GPU threads post on (qp.cuh), and the
// IBGDA back end's device error codes (io.gda4j.ibgda.IbgdaErrorDecoder). Plain C++, so g++ can print it for
// DeviceQpLayoutTest.
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
//   | flush_qp        | flush_flag      |flush_rk|disc_lk |max_inl | peer   |
//   +-----------------+-----------------+--------+--------+--------+--------+
//  line 2: producer state (kernels only; zero at start), and discard_addr (host-written once)
//   128               136               144               152      156      160
//   +-----------------+-----------------+-----------------+--------+--------+
//   | resv_head       | ready_head      | prod_idx        | db_lock| resvd  |
//   +-----------------+-----------------+-----------------+--------+--------+
//   160               168               176               184               192
//   +-----------------+-----------------+-----------------+-----------------+
//   | fetch_end       | gets_posted     | gets_flushed    | discard_addr    |
//   +-----------------+-----------------+-----------------+-----------------+
//  line 3: consumer state (kernels only; zero at start), and the QP's place among its peer's QPs (host-written once)
//   192               200               208      212      216      220      224 .. 256
//   +-----------------+-----------------+--------+--------+--------+--------+-----------+
//   | cons_head       | cq_ci           |poll_lck| error  |qp_count|qp_index| reserved  |
//   +-----------------+-----------------+--------+--------+--------+--------+-----------+
//
// A peer reached over several QPs (GDA4J_IBGDA_QPS_PER_PEER) has qp_count DeviceQps one after the other, 256 bytes
// apart; its PeerEntry.handle points at the first, and entry i has qp_index i.
#pragma once
#include <stdint.h>

namespace gda4j {

// ErrorRecord.code of IBGDA's failures: for the first three, offset = WQE counter, cmp = QP number.
constexpr uint32_t ERROR_CQE = 10;               // an error CQE: expected = WQE opcode,
                                                 // seen = syndrome | vendor << 8 | cqe opcode << 16
constexpr uint32_t ERROR_SQ_FULL = 11;           // no free send queue slot in time: expected = completions needed,
                                                 // seen = completed
constexpr uint32_t ERROR_POST_TIMEOUT = 12;      // posting or quiet stalled: expected = counter waited for,
                                                 // seen = counter reached
constexpr uint32_t ERROR_INLINE_TOO_LARGE = 13;  // an inline payload above the QP's max_inline: expected = bytes,
                                                 // seen = max_inline
constexpr uint32_t ERROR_SET_SIGNAL_RELAXED = 14;  // a SET signal over a NIC with relaxed ordering: cmp = QP number

namespace ibgda {

// DeviceQp.flags (io.gda4j.ibgda.DeviceQpDescriptor.FLAG_*).
// Bit 0 is unused (it once selected a different doorbell store; every doorbell is now an MMIO store).
constexpr uint32_t FLAG_FLUSH_ON_QUIET = 1u << 1;
// The NIC writes with relaxed ordering: an 8-byte inline WRITE used as a SET signal could become visible at the target
// before the data WRITEs ahead of it, so SET signals are refused (ERROR_SET_SIGNAL_RELAXED); an ADD signal is an
// atomic, which reads the word and so cannot pass the writes before it.
constexpr uint32_t FLAG_RELAXED_ORDERING = 1u << 2;
// DeviceQp.error, the QP's first failure (0 = none; once set the QP is dead and every later call on it fails at
// once with this failure): an error CQE is ERROR_SET | cqe_opcode << 16 | vendor_syndrome << 8 | syndrome; a post
// that failed after its reservation (which leaves a hole no later poster can publish past) is
// ERROR_SET | ERROR_POSTING | the ErrorRecord code it failed with (ERROR_SQ_FULL, ERROR_POST_TIMEOUT).
constexpr uint32_t ERROR_SET = 1u << 31;
constexpr uint32_t ERROR_POSTING = 1u << 30;

struct DeviceQp {
  // line 0: rings, as this GPU addresses them
  uint64_t sq_buf;           // send queue ring, sq_wqebbs * 64 bytes
  uint64_t dbrec;            // 8-byte doorbell record; send counter = BE32(pi & 0xffff) in word 1
  uint64_t doorbell;         // 8-byte doorbell register (UAR, or the emulated NIC's stand-in page)
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
  uint32_t discard_lkey;     // where fetched values nobody reads go: the null MR (dropped), or an 8-byte scratch MR
  uint32_t max_inline;
  int32_t peer;              // peer rank, for error records
  // line 2: producer state
  uint64_t resv_head;        // WQEBBs reserved (atomicAdd)
  uint64_t ready_head;       // WQEBBs published in reservation order (CAS)
  uint64_t prod_idx;         // producer index last stored to the doorbell record (under db_lock)
  uint32_t db_lock;
  uint32_t reserved0;
  uint64_t fetch_end;        // counter after the last READ / fetching atomic reserved (atomicMax): fence bit until
                             // cons_head passes it
  uint64_t gets_posted;      // flush QP only: gets published by this rank on any QP (release atomicAdd after publish)
  uint64_t gets_flushed;     // flush QP only: gets_posted covered by the last completed flush (atomicMax)
  uint64_t discard_addr;     // host-written: NIC address for discard_lkey (0 with the null MR)
  // line 3: consumer state
  uint64_t cons_head;        // WQEBBs retired by CQEs
  uint64_t cq_ci;            // CQEs consumed
  uint32_t poll_lock;
  uint32_t error;            // 0, or the first error CQE (ERROR_SET | ...)
  uint32_t qp_count;         // host-written: QPs of this peer (entries of the array this one belongs to), >= 1
  uint32_t qp_index;         // host-written: this entry's place in that array
  uint64_t reserved2[4];
};

static_assert(sizeof(DeviceQp) == 256, "DeviceQp is 256 bytes");
static_assert(__builtin_offsetof(DeviceQp, local_base) == 64, "DeviceQp line 1 at 64");
static_assert(__builtin_offsetof(DeviceQp, resv_head) == 128, "DeviceQp line 2 at 128");
static_assert(__builtin_offsetof(DeviceQp, fetch_end) == 160, "DeviceQp fetch_end at 160");
static_assert(__builtin_offsetof(DeviceQp, discard_addr) == 184, "DeviceQp discard_addr at 184");
static_assert(__builtin_offsetof(DeviceQp, cons_head) == 192, "DeviceQp line 3 at 192");
static_assert(__builtin_offsetof(DeviceQp, qp_count) == 216, "DeviceQp qp_count at 216");

}  // namespace ibgda
}  // namespace gda4j

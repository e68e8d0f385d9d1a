// IBGDA kernels for tests and checks (io.gda4j.ibgda): the device encoder against the golden table, raw WQEs with
// chosen keys and addresses (fault classes), get, and many-thread posting. The device API's own IBGDA path is
// exercised by ops.cu and bench.cu through gda4j.cuh.
#include <gda4j/gda4j.cuh>

using namespace gda4j;

// ---- golden cases (io.gda4j.ibgda.DeviceEncoderGoldenGpuTest writes these structs; 1120 bytes each) -------------
struct GoldenCase {
  uint32_t kind;        // 0 nop, 1 write, 2 write_imm, 3 read, 4 write_inline, 5 fetch_add, 6 compare_swap,
                        // 7 dbr, 8 doorbell, 9 cqe / err_cqe (parse the CQE given in payload)
  uint32_t qpn;
  uint64_t wqe_index;
  uint32_t fm_ce_se;
  uint32_t imm;
  uint64_t raddr;
  uint32_t rkey;
  uint32_t lkey;
  uint64_t addr;
  uint32_t byte_count;
  uint32_t payload_len;
  uint64_t swap_add;
  uint64_t compare;
  uint64_t pi;
  uint64_t cqe_index;
  uint32_t cqe_count;
  uint32_t reserved;
  uint8_t payload[1024];
};
static_assert(sizeof(GoldenCase) == 1120, "GoldenCase is 1120 bytes");

constexpr uint32_t GOLDEN_RING_WQEBBS = 16;  // 1024-byte ring per case: room for the largest inline WQE

// One thread per case; out gets 1024 bytes per case: the ring the WQE was written into, the 8 doorbell(-record)
// bytes, or, for CQEs, the fields the device parses from the tail (8 x u32: opcode, owner, wqe_counter, qpn,
// s_wqe_opcode, fresh, syndrome, vendor_err_synd).
extern "C" __global__ void gda4j_ibgda_encode_cases(const GoldenCase* cases, uint32_t n, uint8_t* out) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const GoldenCase& c = cases[i];
  uint8_t* ring = out + (uint64_t)i * 1024;
  for (int b = 0; b < 1024; b += 16) *reinterpret_cast<uint4*>(ring + b) = make_uint4(0, 0, 0, 0);
  const uint8_t fm = (uint8_t)c.fm_ce_se;
  switch (c.kind) {
    case 0: mlx5::write_nop(ring, GOLDEN_RING_WQEBBS, c.wqe_index, c.qpn, fm); break;
    case 1:
      mlx5::write_rdma_write(ring, GOLDEN_RING_WQEBBS, c.wqe_index, c.qpn, fm, c.raddr, c.rkey, c.addr, c.lkey,
                             c.byte_count);
      break;
    case 2:
      mlx5::write_rdma_write_imm(ring, GOLDEN_RING_WQEBBS, c.wqe_index, c.qpn, fm, c.imm, c.raddr, c.rkey, c.addr,
                                 c.lkey, c.byte_count);
      break;
    case 3:
      mlx5::write_rdma_read(ring, GOLDEN_RING_WQEBBS, c.wqe_index, c.qpn, fm, c.raddr, c.rkey, c.addr, c.lkey,
                            c.byte_count);
      break;
    case 4:
      mlx5::write_rdma_write_inline(ring, GOLDEN_RING_WQEBBS, c.wqe_index, c.qpn, fm, c.raddr, c.rkey, c.payload,
                                    c.payload_len);
      break;
    case 5:
      mlx5::write_atomic_fetch_add(ring, GOLDEN_RING_WQEBBS, c.wqe_index, c.qpn, fm, c.raddr, c.rkey, c.swap_add,
                                   c.addr, c.lkey);
      break;
    case 6:
      mlx5::write_atomic_compare_swap(ring, GOLDEN_RING_WQEBBS, c.wqe_index, c.qpn, fm, c.raddr, c.rkey, c.compare,
                                      c.swap_add, c.addr, c.lkey);
      break;
    case 7: *reinterpret_cast<uint32_t*>(ring + 4) = mlx5::dbr_send_counter(c.pi); break;
    case 8: *reinterpret_cast<uint64_t*>(ring) = mlx5::doorbell_value(c.pi, c.qpn); break;
    default: {
      const uint8_t* cqe = c.payload;
      uint64_t tail = mlx5::load_cqe_tail_acquire(cqe);
      uint32_t* f = reinterpret_cast<uint32_t*>(ring);
      f[0] = mlx5::cqe_tail_opcode(tail);
      f[1] = mlx5::cqe_tail_owner(tail);
      f[2] = mlx5::cqe_tail_wqe_counter(tail);
      f[3] = mlx5::cqe_tail_qpn(tail);
      f[4] = mlx5::cqe_tail_s_wqe_opcode(tail);
      f[5] = mlx5::cqe_tail_is_fresh(tail, c.cqe_index, c.cqe_count) ? 1 : 0;
      f[6] = cqe[mlx5::CqeDescriptor::SYNDROME_OFFSET];
      f[7] = cqe[mlx5::CqeDescriptor::VENDOR_ERR_SYND_OFFSET];
      break;
    }
  }
}

// ---- raw WQEs: chosen keys and addresses, to provoke each fault class (io.gda4j.ibgda.IbgdaGpuTest) ------------
constexpr uint32_t RAW_WRITE = 0;
constexpr uint32_t RAW_READ = 1;
constexpr uint32_t RAW_FETCH_ADD = 2;
constexpr uint32_t RAW_WRITE_INLINE = 3;
constexpr uint32_t RAW_BAD_DS = 4;          // an RDMA_WRITE ctrl segment that claims ds 1: LOCAL_QP_OP
constexpr uint32_t RAW_UNKNOWN_OPCODE = 5;  // opcode 0x7f: LOCAL_QP_OP
constexpr uint32_t RAW_WRITE_IMM = 6;
constexpr uint32_t RAW_WRITE_FLUSH_FLAG = 7;  // a WRITE onto the flush flag, registered without REMOTE_WRITE
constexpr uint32_t QP_KEY = 0xffffffffu;    // "use the QP's own lkey/rkey"

// One WQE on the QP to `peer`, then quiet. raddr/laddr are offsets from the peer's and this rank's heap bases as the
// NIC addresses them (any value: out-of-range ones are the point). Launch 1 thread.
extern "C" __global__ void gda4j_ibgda_raw(const DeviceView* v, int peer, uint32_t kind, uint64_t raddr_offset,
                                           uint32_t rkey, uint64_t laddr_offset, uint32_t lkey, uint32_t bytes,
                                           uint64_t operand, int* status_out) {
  const Peer p = peer_of(v, peer);
  if (p.transport != TRANSPORT_IBGDA) {
    *status_out = ERR_TRANSPORT;
    return;
  }
  ibgda::DeviceQp* qp = reinterpret_cast<ibgda::DeviceQp*>(p.handle);
  const uint32_t rk = rkey == QP_KEY ? qp->rkey : rkey;
  const uint32_t lk = lkey == QP_KEY ? qp->lkey : lkey;
  const uint64_t raddr = qp->remote_base + raddr_offset;
  const uint64_t laddr = qp->local_base + laddr_offset;
  const uint32_t wqebbs =
      kind == RAW_WRITE_INLINE ? mlx5::WqeDescriptor::wqebbs_for_ds(mlx5::WqeDescriptor::inline_ds(bytes)) : 1;
  uint64_t base;
  int st = ibgda::reserve(v, qp, wqebbs, OP_PUT, peer, &base);
  if (st != OK) {
    *status_out = st;
    return;
  }
  uint8_t* sq = reinterpret_cast<uint8_t*>(qp->sq_buf);
  switch (kind) {
    case RAW_READ:
      mlx5::write_rdma_read(sq, qp->sq_wqebbs, base, qp->qpn, ibgda::SIGNALED, raddr, rk, laddr, lk, bytes);
      break;
    case RAW_FETCH_ADD:
      mlx5::write_atomic_fetch_add(sq, qp->sq_wqebbs, base, qp->qpn, ibgda::SIGNALED, raddr, rk, operand, laddr, lk);
      break;
    case RAW_WRITE_INLINE:
      mlx5::write_rdma_write_inline(sq, qp->sq_wqebbs, base, qp->qpn, ibgda::SIGNALED, raddr, rk,
                                    reinterpret_cast<const uint8_t*>(p.local_heap + laddr_offset), bytes);
      break;
    case RAW_BAD_DS:
      mlx5::write_rdma_write(sq, qp->sq_wqebbs, base, qp->qpn, ibgda::SIGNALED, raddr, rk, laddr, lk, bytes);
      mlx5::write_ctrl_seg(sq + mlx5::WqeDescriptor::wqebb_offset(base, qp->sq_wqebbs), mlx5::Mlx5Opcode::RDMA_WRITE,
                           0, base, qp->qpn, 1, ibgda::SIGNALED, 0);
      break;
    case RAW_UNKNOWN_OPCODE:
      mlx5::write_ctrl_seg(sq + mlx5::WqeDescriptor::wqebb_offset(base, qp->sq_wqebbs), 0x7f, 0, base, qp->qpn, 1,
                           ibgda::SIGNALED, 0);
      break;
    case RAW_WRITE_FLUSH_FLAG:
      mlx5::write_rdma_write(sq, qp->sq_wqebbs, base, qp->qpn, ibgda::SIGNALED, qp->flush_flag, qp->flush_rkey, laddr,
                             lk, 8);
      break;
    case RAW_WRITE_IMM:
      mlx5::write_rdma_write_imm(sq, qp->sq_wqebbs, base, qp->qpn, ibgda::SIGNALED, 7, raddr, rk, laddr, lk, bytes);
      break;
    case RAW_WRITE:
    default:
      mlx5::write_rdma_write(sq, qp->sq_wqebbs, base, qp->qpn, ibgda::SIGNALED, raddr, rk, laddr, lk, bytes);
      break;
  }
  ibgda::note_size(qp, base, wqebbs);
  st = ibgda::publish(v, qp, base, wqebbs, OP_PUT, peer);
  if (st == OK) st = ibgda::quiet(v, qp, peer);
  *status_out = st;
}

// get (RDMA READ) of the peer's [src, src + bytes) into this rank's [dst, ...), then quiet. Launch 1 thread.
extern "C" __global__ void gda4j_ibgda_get(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset,
                                           uint64_t bytes, int* status_out) {
  int st = get(peer_of(v, peer), dst_offset, src_offset, bytes);
  if (st == OK) st = quiet(v);
  *status_out = st;
}

// Every thread of the grid posts `per_thread` puts of `bytes`: put k of thread t copies this rank's
// [src + (t * per_thread + k) * stride, + bytes) to the same offset range at dst. Then each block quiets. Many
// threads and warps reserve slots on one QP at once; with per_thread * threads > 4 * SQ depth the ring wraps, and
// past 65,536 WQEs the 16-bit counters do.
extern "C" __global__ void gda4j_ibgda_put_many(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset,
                                                uint64_t bytes, uint32_t per_thread, uint64_t stride, int* status_out) {
  const Peer p = peer_of(v, peer);
  const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int st = OK;
  for (uint32_t k = 0; k < per_thread && st == OK; ++k) {
    const uint64_t off = (t * per_thread + k) * stride;
    st = put(p, dst_offset + off, src_offset + off, bytes);
  }
  __syncthreads();
  if (threadIdx.x == 0 && st == OK) st = quiet(v);
  if (st != OK) atomicMin(status_out, st);
}

// Reserves more WQEBBs than the send queue holds, which no completion can ever satisfy: the reservation fails with
// ERROR_SQ_FULL after the view's timeout, after its atomicAdd, leaving a hole in the reservation order
// (io.gda4j.ibgda.IbgdaFailureGpuTest). Launch 1 thread.
extern "C" __global__ void gda4j_ibgda_fail_reservation(const DeviceView* v, int peer, int* status_out) {
  const Peer p = peer_of(v, peer);
  if (p.transport != TRANSPORT_IBGDA) {
    *status_out = ERR_TRANSPORT;
    return;
  }
  ibgda::DeviceQp* qp = reinterpret_cast<ibgda::DeviceQp*>(p.handle);
  uint64_t base;
  *status_out = ibgda::reserve(v, qp, qp->sq_wqebbs + 1, OP_PUT, peer, &base);
}

// get of the peer's [src, src + bytes) into this rank's [dst, ...), then at once a put of this rank's [dst, ...) to
// the peer's [put_dst, ...), then quiet. Nothing but the fence bit on the put's WQE keeps the put from reading dst
// before the READ's data has landed (io.gda4j.ibgda.IbgdaFenceGpuTest). Launch 1 thread.
extern "C" __global__ void gda4j_ibgda_get_then_put(const DeviceView* v, int peer, uint64_t dst_offset,
                                                    uint64_t src_offset, uint64_t bytes, uint64_t put_dst_offset,
                                                    int* status_out) {
  const Peer p = peer_of(v, peer);
  int st = get(p, dst_offset, src_offset, bytes);
  if (st == OK) st = fence(p);
  if (st == OK) st = put(p, put_dst_offset, dst_offset, bytes);
  if (st == OK) st = quiet(v);
  *status_out = st;
}

// get of the peer's [src, src + 8) into this rank's [dst, ...), quiet, then at once read the 8 bytes at dst into
// out[1] (out[0] = status). Where the NIC's writes may pass their CQE, only quiet's PCIe flush makes the fetched
// bytes visible here by then (io.gda4j.ibgda.IbgdaFlushGpuTest). Launch 1 thread.
extern "C" __global__ void gda4j_ibgda_get_quiet_read(const DeviceView* v, int peer, uint64_t dst_offset,
                                                      uint64_t src_offset, unsigned long long* out) {
  const Peer p = peer_of(v, peer);
  int st = get(p, dst_offset, src_offset, 8);
  if (st == OK) st = quiet(v);
  out[1] = st == OK ? *reinterpret_cast<const volatile unsigned long long*>(v->heap_base + dst_offset) : 0;
  out[0] = (unsigned long long)(long long)st;
}

// ---- atomics on one word (io.gda4j.ibgda.IbgdaAtomicsGpuTest) ----------------------------------------------------
// One thread adds 1 to `target`'s word `counter_offset` `adds` times through the device API, rotating atomic_add,
// signal ADD and put_signal ADD (8 bytes from data_offset), then quiet. From the target rank itself the adds are its
// own: with IBGDA peers they go through its loopback QP, so every rank can add to one counter and the sum is exact.
extern "C" __global__ void gda4j_ibgda_add_counter(const DeviceView* v, int target, uint64_t counter_offset,
                                                   uint64_t data_offset, uint32_t adds, int* status_out) {
  const Peer p = peer_of(v, target);
  int st = OK;
  for (uint32_t i = 0; i < adds && st == OK; ++i) {
    if (i % 3 == 0) {
      st = atomic_add(p, counter_offset, 1);
    } else if (i % 3 == 1) {
      st = signal(p, counter_offset, SIGNAL_ADD, 1);
    } else {
      st = put_signal(p, data_offset, data_offset, 8, counter_offset, SIGNAL_ADD, 1);
    }
  }
  if (st == OK) st = quiet(v);
  *status_out = st;
}

// Bypasses the device API's routing: this rank adds 1 to its own word `counter_offset` with plain GPU atomics
// (atomicAdd_system) until its word `done_offset` reaches `peers` (each peer adds 1 there when its own adds are
// complete), counting them into *raw_adds_out. Against NIC atomics that are a read and a write (the emulated NIC's
// strict atomics, or a ConnectX), some of these adds are lost. Launch 1 thread.
extern "C" __global__ void gda4j_ibgda_raw_add_until(const DeviceView* v, uint64_t counter_offset,
                                                     uint64_t done_offset, uint64_t peers,
                                                     unsigned long long* raw_adds_out, int* status_out) {
  const Local me = local_of(v);
  unsigned long long* counter = reinterpret_cast<unsigned long long*>(me.heap + counter_offset);
  const uint64_t* done = reinterpret_cast<const uint64_t*>(me.heap + done_offset);
  Deadline d;
  unsigned long long n = 0;
  int st = OK;
  while (load_acquire_sys(done) < peers) {
    atomicAdd_system(counter, 1ull);
    ++n;
    if (n % POLLS_PER_LOOK == 0 && (st = look(me.abort_flag, me.timeout_ns, &d)) != OK) {
      if (st == ERR_TIMEOUT) {
        fail(v, ERR_TIMEOUT, ERROR_WAIT_TIMEOUT, OP_WAIT_UNTIL, me.rank, done_offset, peers, load_acquire_sys(done));
      }
      break;
    }
  }
  *raw_adds_out = n;
  *status_out = st;
}

// A peer's side of that race: `adds` atomic_adds of 1 to `target`'s counter, quiet, then 1 added to its done word.
extern "C" __global__ void gda4j_ibgda_add_then_done(const DeviceView* v, int target, uint64_t counter_offset,
                                                     uint64_t done_offset, uint32_t adds, int* status_out) {
  const Peer p = peer_of(v, target);
  int st = OK;
  for (uint32_t i = 0; i < adds && st == OK; ++i) st = atomic_add(p, counter_offset, 1);
  if (st == OK) st = quiet(v);
  if (st == OK) st = signal(p, done_offset, SIGNAL_ADD, 1);
  if (st == OK) st = quiet(v);
  *status_out = st;
}

// ---- several QPs per peer (IbgdaSeveralQpsGpuTest) -------------------------------------------------------------
// Every warp of the grid puts its `slice` bytes (src + g * slice to dst + g * slice, g its grid warp: on QP g % qps
// of an unbound Peer, or on channel g with `bound`); the last block to finish then fences the peer and SETs the signal
// to `value`. qp_out[i] gets the WQEBBs reserved on the peer's QP i when it is done (0 past the peer's QPs).
extern "C" __global__ void gda4j_ibgda_warps_then_signal(const DeviceView* v, int peer, uint64_t dst, uint64_t src,
                                                         uint64_t slice, uint64_t sig, uint64_t value, int bound,
                                                         uint32_t* blocks_done, uint64_t* qp_out, int* status_out) {
  const uint32_t g = detail::grid_warp();
  const Peer unbound = peer_of(v, peer);
  const Peer p = bound ? with_channel(unbound, g) : unbound;
  int st = put_warp(p, dst + g * slice, src + g * slice, slice);
  __shared__ int failed;
  if (threadIdx.x == 0) failed = 0;
  __syncthreads();
  if (lane_id() == 0 && st != OK) atomicExch(&failed, 1);
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence();
  if (atomicAdd(blocks_done, 1u) != gridDim.x - 1) {
    if (failed) atomicExch(status_out, ERR_TRANSPORT);
    return;
  }
  __threadfence();
  // The last block: every warp's put was posted before its block's add (the acq_rel chain of the adds), so fence
  // (draining the peer's other QPs) covers them all, and the signal goes out after.
  st = failed ? ERR_TRANSPORT : fence(unbound);
  if (st == OK) st = signal(unbound, sig, SIGNAL_SET, value);
  if (st == OK) st = quiet(v);
  const ibgda::DeviceQp* base = reinterpret_cast<const ibgda::DeviceQp*>(v->peers[peer].handle);
  for (uint32_t i = 0; i < 8; ++i) qp_out[i] = i < base->qp_count ? base[i].resv_head : 0;
  *status_out = st;
}

// Waits for the signal to reach `value`, then counts the 8-byte words of [dst, dst + bytes) that are not
// pattern(word index) yet: what a signal that overtook its data would leave. out: {mismatches, status}.
extern "C" __global__ void gda4j_ibgda_check_after_signal(const DeviceView* v, uint64_t dst, uint64_t bytes,
                                                          uint64_t sig, uint64_t value, uint64_t pattern,
                                                          uint64_t* out) {
  const Local me = local_of(v);
  __shared__ int st;
  if (threadIdx.x == 0) st = wait_until(me, sig, CMP_GE, value);
  __syncthreads();
  uint64_t bad = 0;
  if (st == OK) {
    const volatile uint64_t* words = reinterpret_cast<const volatile uint64_t*>(me.heap + dst);
    for (uint64_t i = threadIdx.x; i < bytes / 8; i += blockDim.x) bad += words[i] != (pattern ^ i);
  }
  atomicAdd(reinterpret_cast<unsigned long long*>(out), (unsigned long long)bad);
  if (threadIdx.x == 0) out[1] = (uint64_t)st;
}

// gda4j/transport/ibgda/qp.cuh: GPU-initiated posting on an mlx5 queue pair (a real NIC or the emulated NIC; same
// bytes), on the struct DeviceQp of device_qp.cuh.
#pragma once
#include <stdint.h>
#include "device_qp.cuh"

// ================================================================================================================
// Posting, completions and the device API over WQEs (CUDA only; transport/ibgda/device_qp.cuh is plain C++ for layout checks).
//
// Protocol (docs/ARCHITECTURE.md, "IBGDA on mlx5"), for any number of threads and warps posting on one QP at once:
//  1. reserve: atomicAdd on resv_head gives each caller its own WQEBBs [base, base + n);
//  2. never overwrite an unfinished slot: wait until cons_head (WQEBBs retired by CQEs) >= base + n - sq_wqebbs,
//     polling the CQ meanwhile, with the view's timeout (ERROR_SQ_FULL);
//  3. write the WQE segments with plain 16-byte stores, every WQE signaled (CQ_UPDATE), its size in wqe_sizes (the
//     WQEBBs the encoder returned); a WQE reserved after a READ or a fetching atomic that has not completed carries
//     the fence bit (see "Fence" below);
//  4. publish in reservation order: fence.acq_rel.sys (release of the WQE bytes), then CAS ready_head from base to
//     base + n (waits for earlier reservations, with a timeout: ERROR_POST_TIMEOUT);
//  5. ring under db_lock: producer index = ready_head (acquire), st.release.sys of the doorbell record, then the
//     8-byte doorbell (fence.sc.sys + st.mmio.relaxed.sys, to a UAR or the emulated NIC's stand-in page).
// Completions: every WQE is signaled, so each CQE retires exactly one WQE; the poller (poll_lock holder) reads each
// CQE tail with ld.acquire.sys, checks it for errors (ERROR_CQE names QP, WQE index, opcode, syndrome), advances
// cq_ci and cons_head, and publishes the consumer index in the CQ doorbell record before cons_head, so the NIC (or
// the emulated engine) sees CQEs consumed before it can see any WQE that reuses their slots. The CQ holds at least
// sq_wqebbs CQEs and at most sq_wqebbs WQEs are outstanding, so it cannot overrun.
// Failure: a post that fails after its reservation's atomicAdd (SQ full, an error CQE, a stalled publish) marks the
// QP failed (DeviceQp.error) before it returns: its WQEBBs will never be published, so every later poster would
// wait behind the hole. Every call checks the word first and returns that first failure at once.
// Fence: an RC QP keeps its WQEs in order on the wire, but a later WQE may be executed, and may read its local
// source, before an earlier RDMA READ's response (or an atomic's fetched value) has landed, unless its control
// segment carries the fence bit (MLX5_WQE_CTRL_FENCE). So `get(buf); put(from buf)` would send stale bytes. The
// poster of a READ (or of an atomic whose fetched value lands in memory) raises fetch_end to the end of its WQEs;
// every WQE at or after fetch_end carries the fence bit while cons_head (WQEs completed) is below fetch_end. A WQE
// posted by the same thread after the READ (or ordered after it by a barrier) sees the raised fetch_end.
// ================================================================================================================
// Host build: the CPU tests compile this header with g++, GDA4J_HOST_MODEL naming a header that supplies, for host
// threads and a model NIC (host/src/test/c/ibgda_host_model.h), everything the #else branch below takes from CUDA:
// the atomics, the ordered loads, stores and fences, the error record, the clock, mlx5's ordered stores.
#if defined(__CUDACC__) || defined(GDA4J_HOST_MODEL)
#include "../../layout/view.cuh"
#include "../../layout/mlx5.cuh"
#include "../../layout/inline_slot.cuh"
#if defined(GDA4J_HOST_MODEL)
#include GDA4J_HOST_MODEL
#else
#include "../../core/memory_model.cuh"
#include "../../core/errors.cuh"
#include "../../core/deadline.cuh"

namespace gda4j {
namespace ibgda {
namespace detail {
// GPU-scope acquire/release fence for the locks below (the host build supplies its own).
__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
}  // namespace detail
}  // namespace ibgda
}  // namespace gda4j
#endif

namespace gda4j {
namespace ibgda {

// A larger RDMA WRITE/READ is split into WQEs of at most this many bytes (byte_count is 31-bit on mlx5).
constexpr uint64_t MAX_WQE_BYTES = 1ull << 30;
// Every WQE asks for a CQE: completions retire slots one WQE at a time.
constexpr uint8_t SIGNALED = mlx5::WqeDescriptor::FM_CE_SE_CQ_UPDATE;

namespace detail {

// DeviceQp state words are touched only by this GPU: the gpu-scope accessors of core/memory_model.cuh order them.
// Lock acquire/release for db_lock and poll_lock: CAS 0->1 then an acquire fence; a release fence then store 0.
__device__ __forceinline__ bool try_lock(uint32_t* lock) {
  if (atomicCAS(lock, 0u, 1u) != 0u) return false;
  fence_acq_rel_gpu();  // acquire: see what the previous holder wrote under the lock
  return true;
}
__device__ __forceinline__ void unlock(uint32_t* lock) {
  fence_acq_rel_gpu();  // release: the holder's writes before the lock is free again
  atomicExch(lock, 0u);
}

// Once per POLLS_PER_LOOK spins (the queue's words are GPU memory; core/deadline.cuh): the look, and on a timeout
// the error record. OK = keep spinning.
__device__ inline __noinline__ int stall(const DeviceView* v, Deadline* d, uint32_t code, uint32_t op, int peer,
                                         uint64_t counter, uint64_t want, uint64_t seen, uint32_t qpn) {
  const int st = look(reinterpret_cast<const uint64_t*>(v->abort_flag), v->timeout_ns, d);
  if (st == ERR_TIMEOUT) record_error(v, code, op, peer, counter, want, seen, qpn, d->elapsed);
  return st;
}

// An error CQE: mark the QP dead, record what the CQE says, raise the abort flag.
__device__ inline __noinline__ int fail_cqe(const DeviceView* v, DeviceQp* qp, uint32_t op, int peer, uint64_t tail,
                                            const uint8_t* cqe) {
  // The tail was loaded with acquire: the CQE body (syndromes) written before it is visible to plain loads.
  uint32_t syndrome = *reinterpret_cast<const volatile uint8_t*>(cqe + mlx5::CqeDescriptor::SYNDROME_OFFSET);
  uint32_t vendor = *reinterpret_cast<const volatile uint8_t*>(cqe + mlx5::CqeDescriptor::VENDOR_ERR_SYND_OFFSET);
  uint32_t cqe_opcode = mlx5::cqe_tail_opcode(tail);
  uint32_t word = ERROR_SET | (cqe_opcode & 0xf) << 16 | vendor << 8 | syndrome;
  atomicCAS(&qp->error, 0u, word);
  record_error(v, ERROR_CQE, op, peer, mlx5::cqe_tail_wqe_counter(tail), mlx5::cqe_tail_s_wqe_opcode(tail),
               (uint64_t)(word & ~ERROR_SET), mlx5::cqe_tail_qpn(tail), 0);
  return ERR_TRANSPORT;
}

// A call on a QP that failed earlier: the record (if this is the first error since the host cleared them) names the
// QP's first failure, not this call's symptom.
__device__ inline __noinline__ int fail_dead(const DeviceView* v, DeviceQp* qp, uint32_t op, int peer) {
  uint32_t word = *reinterpret_cast<volatile uint32_t*>(&qp->error);
  if (word & ERROR_POSTING) {
    const uint32_t code = word & ~(ERROR_SET | ERROR_POSTING);
    record_error(v, code, op, peer, load_relaxed_gpu(&qp->ready_head), load_relaxed_gpu(&qp->resv_head),
                 load_relaxed_gpu(&qp->cons_head), qp->qpn, 0);
    return code == ERROR_SQ_FULL || code == ERROR_POST_TIMEOUT ? ERR_TIMEOUT : ERR_TRANSPORT;
  }
  record_error(v, ERROR_CQE, op, peer, load_relaxed_gpu(&qp->cons_head), 0, (uint64_t)(word & ~ERROR_SET), qp->qpn, 0);
  return ERR_TRANSPORT;
}

__device__ __forceinline__ bool is_failed(const DeviceQp* qp) {
  return __builtin_expect(*reinterpret_cast<const volatile uint32_t*>(&qp->error) != 0, 0);
}

// A post failed after its reservation with `code` (its record already written by stall): the QP is failed from now
// on. The first failure wins; an aborted wait (ERR_ABORTED: another rank failed) leaves a hole too.
__device__ inline __noinline__ void mark_failed(DeviceQp* qp, uint32_t code) {
  atomicCAS(&qp->error, 0u, ERROR_SET | ERROR_POSTING | code);
}

}  // namespace detail

// Consumes every CQE that has arrived and retires the WQEs they complete. One poller at a time (poll_lock, taken
// with a try: a thread that finds it held returns OK and looks at cons_head again). Returns ERR_TRANSPORT (with a
// record) if this or an earlier CQE reported an error.
__device__ inline __noinline__ int poll_cq(const DeviceView* v, DeviceQp* qp, uint32_t op, int peer) {
  if (detail::is_failed(qp)) {
    return detail::fail_dead(v, qp, op, peer);
  }
  if (!detail::try_lock(&qp->poll_lock)) return OK;
  const uint32_t count = qp->cqe_count;
  const uint32_t wqebbs = qp->sq_wqebbs;
  const uint8_t* cq = reinterpret_cast<const uint8_t*>(qp->cq_buf);
  const uint8_t* sizes = reinterpret_cast<const uint8_t*>(qp->wqe_sizes);
  uint64_t ci = load_relaxed_gpu(&qp->cq_ci);
  uint64_t cons = load_relaxed_gpu(&qp->cons_head);
  const uint64_t ci_start = ci;
  int st = OK;
  for (;;) {
    const uint8_t* cqe = cq + ((ci & (count - 1)) << mlx5::CqeDescriptor::CQE_SHIFT);
    // Acquire: the NIC writes the tail (owner bit) last; the body is visible once a fresh tail is.
    const uint64_t tail = mlx5::load_cqe_tail_acquire(cqe);
    if (!mlx5::cqe_tail_is_fresh(tail, ci, count)) break;
    if (__builtin_expect(mlx5::cqe_tail_opcode(tail) != mlx5::CqeOpcode::REQ, 0)) {
      st = detail::fail_cqe(v, qp, op, peer, tail, cqe);
      break;
    }
    // The CQE names the first WQEBB of the WQE it completes, modulo 2^16; fewer than 2^15 are outstanding.
    const uint64_t wqe = cons + ((mlx5::cqe_tail_wqe_counter(tail) - (uint32_t)cons) & 0xffffu);
    const uint32_t size = load_relaxed_u8(sizes + (wqe & (wqebbs - 1)));
    cons = wqe + (size != 0 ? size : 1);
    ++ci;
  }
  if (ci != ci_start) {
    // Consumer index first (relaxed, system scope: the NIC reads it), then cons_head with a release, so whoever
    // reuses the slots these CQEs freed has the consumer index ordered before its WQEs and their doorbell record.
    store_relaxed_sys_u32(reinterpret_cast<uint8_t*>(qp->cq_dbrec),
                                  mlx5::be32((uint32_t)(ci & 0xffffffu)));
    store_relaxed_gpu(&qp->cq_ci, ci);
    store_release_gpu(&qp->cons_head, cons);
  }
  detail::unlock(&qp->poll_lock);
  return st;
}

namespace detail {

__device__ inline __noinline__ int wait_slots(const DeviceView* v, DeviceQp* qp, uint64_t base, uint64_t need,
                                              uint32_t op, int peer) {
  Deadline d;
  for (uint32_t spins = 1;; ++spins) {
    int st = poll_cq(v, qp, op, peer);
    if (st != OK) return st;
    // Acquire: the retired slots' old WQEs were read by the NIC before their CQEs; we may overwrite them now.
    const uint64_t cons = load_acquire_gpu(&qp->cons_head);
    if (cons >= need) return OK;
    if (spins % POLLS_PER_LOOK == 0) {
      st = stall(v, &d, ERROR_SQ_FULL, op, peer, base, need, cons, qp->qpn);
      if (st != OK) return st;
    }
  }
}

__device__ inline __noinline__ int wait_publish(const DeviceView* v, DeviceQp* qp, uint64_t base, uint32_t n,
                                                uint32_t op, int peer) {
  Deadline d;
  for (uint32_t spins = 1;; ++spins) {
    if (atomicCAS(reinterpret_cast<unsigned long long*>(&qp->ready_head), base, base + n) == base) return OK;
    if (spins % POLLS_PER_LOOK == 0) {
      // An earlier reservation failed and will never be published: give up now, naming that failure.
      if (is_failed(qp)) return fail_dead(v, qp, op, peer);
      int st = stall(v, &d, ERROR_POST_TIMEOUT, op, peer, base, base,
                     load_relaxed_gpu(&qp->ready_head), qp->qpn);
      if (st != OK) return st;
    }
  }
}

__device__ inline __noinline__ int wait_doorbell_lock(const DeviceView* v, DeviceQp* qp, uint32_t op, int peer) {
  Deadline d;
  for (uint32_t spins = 1;; ++spins) {
    if (try_lock(&qp->db_lock)) return OK;
    if (spins % POLLS_PER_LOOK == 0) {
      int st = stall(v, &d, ERROR_POST_TIMEOUT, op, peer, load_relaxed_gpu(&qp->ready_head),
                     load_relaxed_gpu(&qp->ready_head), load_relaxed_gpu(&qp->prod_idx), qp->qpn);
      if (st != OK) return st;
    }
  }
}

}  // namespace detail

// Reserves n WQEBBs and waits until they are free; *base gets the first counter. A QP that failed earlier fails the
// call at once; a wait that fails after the atomicAdd marks the QP failed (its WQEBBs are a hole from now on).
__device__ __forceinline__ int reserve(const DeviceView* v, DeviceQp* qp, uint32_t n, uint32_t op, int peer,
                                       uint64_t* base) {
  if (detail::is_failed(qp)) return detail::fail_dead(v, qp, op, peer);
  const uint64_t b = atomicAdd(reinterpret_cast<unsigned long long*>(&qp->resv_head), (unsigned long long)n);
  *base = b;
  const uint64_t depth = qp->sq_wqebbs;
  if (b + n <= depth) return OK;  // first pass over the ring
  const uint64_t need = b + n - depth;
  if (__builtin_expect(load_acquire_gpu(&qp->cons_head) >= need, 1)) return OK;
  const int st = detail::wait_slots(v, qp, b, need, op, peer);
  if (st != OK) detail::mark_failed(qp, ERROR_SQ_FULL);
  return st;
}

// The fence bit for the WQE at counter `wqe`: set while an earlier READ or fetching atomic (ending at fetch_end) has
// not completed (cons_head below it). Relaxed loads: the poster's own earlier atomicMax is visible to it (same
// thread, or ordered by the barrier that put this call after the READ), and a stale cons_head only adds a fence.
__device__ __forceinline__ uint8_t fence_flag(DeviceQp* qp, uint64_t wqe) {
  const uint64_t fetch_end = load_relaxed_gpu(&qp->fetch_end);
  if (__builtin_expect(fetch_end == 0, 1)) return 0;
  return (wqe >= fetch_end && load_relaxed_gpu(&qp->cons_head) < fetch_end) ? mlx5::WqeDescriptor::FM_CE_SE_FENCE : 0;
}

// A READ or a fetching atomic ends at counter `end`: later WQEs carry the fence bit until it completes.
__device__ __forceinline__ void note_fetch(DeviceQp* qp, uint64_t end) {
  atomicMax(reinterpret_cast<unsigned long long*>(&qp->fetch_end), (unsigned long long)end);
}

// Rings the NIC for everything published so far. Several threads may call it at once: under db_lock each one
// raises the producer index to ready_head if it grew, so doorbells coalesce and never go backwards.
__device__ inline __noinline__ int ring(const DeviceView* v, DeviceQp* qp, uint32_t op, int peer) {
  if (!detail::try_lock(&qp->db_lock)) {
    int st = detail::wait_doorbell_lock(v, qp, op, peer);
    if (st != OK) return st;
  }
  // Acquire: the WQEs published up to pi (each publisher's fence.acq_rel.sys precedes its CAS) happen before here.
  const uint64_t pi = load_acquire_gpu(&qp->ready_head);
  if (pi > load_relaxed_gpu(&qp->prod_idx)) {
    store_relaxed_gpu(&qp->prod_idx, pi);
    // Release at system scope: the WQE bytes before the new producer index, for the NIC's DMA read after the
    // doorbell (the emulated engine reads the record after the doorbell and checks that it covers it).
    mlx5::store_dbr_send_counter_release(reinterpret_cast<void*>(qp->dbrec), pi);
    // The one doorbell path, for a real UAR and for the emulated NIC's stand-in page alike: an MMIO store is not
    // ordered by release semantics, so fence.sc.sys puts the doorbell record (and the WQEs) ahead of it for the NIC,
    // which acts on the doorbell and then DMA-reads them (the emulated engine polls this word, never the record).
    __threadfence_system();
    mlx5::store_doorbell_mmio(reinterpret_cast<void*>(qp->doorbell), pi, qp->qpn);
  }
  detail::unlock(&qp->db_lock);
  return OK;
}

// Publishes WQEBBs [base, base + n) (their bytes and wqe_sizes written) in reservation order, then rings.
__device__ inline __noinline__ int publish(const DeviceView* v, DeviceQp* qp, uint64_t base, uint32_t n, uint32_t op,
                                       int peer) {
  // Release at system scope: this thread's WQE stores (and, after a warp/block barrier, its group's payload
  // stores) are ordered before the CAS that lets a ringer include them.
  fence_acq_rel_sys();
  if (atomicCAS(reinterpret_cast<unsigned long long*>(&qp->ready_head), base, base + n) != base) {
    int st = detail::wait_publish(v, qp, base, n, op, peer);
    if (st != OK) {
      detail::mark_failed(qp, ERROR_POST_TIMEOUT);  // never published: a hole for every later poster
      return st;
    }
  }
  return ring(v, qp, op, peer);
}

__device__ __forceinline__ uint8_t* sq_of(const DeviceQp* qp) { return reinterpret_cast<uint8_t*>(qp->sq_buf); }

__device__ __forceinline__ void note_size(DeviceQp* qp, uint64_t wqe, uint32_t wqebbs) {
  reinterpret_cast<uint8_t*>(qp->wqe_sizes)[wqe & (qp->sq_wqebbs - 1)] = (uint8_t)wqebbs;
}

// Writes RDMA_WRITE (or READ) WQEs for [0, bytes) at counters base, base + 1, ...; returns the count written.
__device__ inline __noinline__ uint32_t write_rdma_chunks(DeviceQp* qp, uint64_t base, uint8_t opcode, uint64_t raddr,
                                                      uint32_t rkey, uint64_t laddr, uint32_t lkey, uint64_t bytes) {
  uint32_t n = 0;
  for (uint64_t off = 0; off < bytes; off += MAX_WQE_BYTES, ++n) {
    const uint32_t len = (uint32_t)min(MAX_WQE_BYTES, bytes - off);
    mlx5::write_rdma(sq_of(qp), qp->sq_wqebbs, base + n, opcode, qp->qpn, SIGNALED | fence_flag(qp, base + n), 0,
                     raddr + off, rkey, laddr + off, lkey, len);
    note_size(qp, base + n, 1);
  }
  return n;
}

__device__ __forceinline__ uint32_t chunks(uint64_t bytes) { return (uint32_t)((bytes + MAX_WQE_BYTES - 1) / MAX_WQE_BYTES); }

// WQEBBs of the signal WQE of put_signal/signal: SET = an 8-byte inline WRITE of the value, ADD = an ATOMIC_FA
// whose fetched value goes to discard_addr/discard_lkey (the null MR, or a scratch word nobody reads: no later WQE
// needs a fence for it, and no flush).
constexpr uint32_t SIGNAL_VALUE_BYTES = 8;
__device__ __forceinline__ uint32_t signal_wqebbs(uint32_t op) {
  return op == SIGNAL_ADD ? 1 : mlx5::WqeDescriptor::wqebbs_for_ds(mlx5::WqeDescriptor::inline_ds(SIGNAL_VALUE_BYTES));
}

// Writes the signal WQE at `wqe`; returns the WQEBBs the encoder used (recorded in wqe_sizes).
__device__ inline __noinline__ uint32_t write_signal(DeviceQp* qp, uint64_t wqe, uint64_t sig_offset, uint32_t op,
                                                     uint64_t value) {
  const uint64_t raddr = qp->remote_base + sig_offset;
  const uint8_t flags = SIGNALED | fence_flag(qp, wqe);
  uint32_t used;
  if (op == SIGNAL_ADD) {
    used = mlx5::write_atomic_fetch_add(sq_of(qp), qp->sq_wqebbs, wqe, qp->qpn, flags, raddr, qp->rkey, value,
                                        qp->discard_addr, qp->discard_lkey);
  } else {
    used = mlx5::write_rdma_write_inline(sq_of(qp), qp->sq_wqebbs, wqe, qp->qpn, flags, raddr, qp->rkey,
                                         reinterpret_cast<const uint8_t*>(&value), SIGNAL_VALUE_BYTES);
  }
  note_size(qp, wqe, used);
  return used;
}

// An inline payload of `bytes` must fit the QP's max_inline (the NIC would reject a larger one with a local length
// error after the fact): checked before anything is reserved.
__device__ inline __noinline__ int check_inline(const DeviceView* v, const DeviceQp* qp, uint32_t op, int peer,
                                                uint64_t offset, uint32_t bytes) {
  if (__builtin_expect(bytes <= qp->max_inline, 1)) return OK;
  return fail(v, ERR_TRANSPORT, ERROR_INLINE_TOO_LARGE, op, peer, offset, bytes, qp->max_inline);
}

// A SET signal is an 8-byte inline WRITE: it must fit max_inline, and it is refused where relaxed ordering would let
// it overtake the data before it (FLAG_RELAXED_ORDERING).
__device__ inline __noinline__ int check_set_signal(const DeviceView* v, const DeviceQp* qp, uint32_t op, int peer,
                                                    uint64_t offset) {
  if (__builtin_expect(qp->flags & FLAG_RELAXED_ORDERING, 0)) {
    // cmp = QP number, as layout/view.cuh documents for this code (fail() would leave cmp 0).
    record_error(v, ERROR_SET_SIGNAL_RELAXED, op, peer, offset, SIGNAL_SET, 0, qp->qpn, 0);
    return ERR_TRANSPORT;
  }
  return check_inline(v, qp, op, peer, offset, SIGNAL_VALUE_BYTES);
}

// ---- the device API on one QP (transport/ibgda/ibgda.cuh calls these for TRANSPORT_IBGDA peers) ----------------------
// Offsets are heap offsets, already range-checked by the caller; `peer` and `op` only label error records.

// RDMA WRITE of [src, src + bytes) of this rank's heap to [dst, ...) of the peer's. Complete at the next quiet.
__device__ inline __noinline__ int put(const DeviceView* v, DeviceQp* qp, int peer, uint32_t op, uint64_t dst,
                                   uint64_t src, uint64_t bytes) {
  if (bytes == 0) return OK;
  const uint32_t n = chunks(bytes);
  uint64_t base;
  int st = reserve(v, qp, n, op, peer, &base);
  if (st != OK) return st;
  write_rdma_chunks(qp, base, mlx5::Mlx5Opcode::RDMA_WRITE, qp->remote_base + dst, qp->rkey, qp->local_base + src,
                    qp->lkey, bytes);
  return publish(v, qp, base, n, op, peer);
}

// RDMA READ of the peer's [src, src + bytes) into this rank's [dst, ...). The data is there after quiet.
__device__ inline __noinline__ int get(const DeviceView* v, DeviceQp* qp, int peer, uint64_t dst, uint64_t src,
                                   uint64_t bytes) {
  if (bytes == 0) return OK;
  const uint32_t n = chunks(bytes);
  uint64_t base;
  int st = reserve(v, qp, n, OP_GET, peer, &base);
  if (st != OK) return st;
  note_fetch(qp, base + n);  // before publishing: a later WQE of this thread must see it
  write_rdma_chunks(qp, base, mlx5::Mlx5Opcode::RDMA_READ, qp->remote_base + src, qp->rkey, qp->local_base + dst,
                    qp->lkey, bytes);
  st = publish(v, qp, base, n, OP_GET, peer);
  if (st == OK && qp->flush_qp != 0) {
    // Counted after the publish (release): a quiet that sees the count drains a ready_head that includes this READ.
    DeviceQp* fqp = reinterpret_cast<DeviceQp*>(qp->flush_qp);
    __threadfence();
    atomicAdd(reinterpret_cast<unsigned long long*>(&fqp->gets_posted), 1ull);
  }
  return st;
}

// The data WQEs and the signal WQE reserved together: one RC QP executes them in order, so the signal lands after
// the data (the emulated NIC: one stream, in order). With relaxed ordering a SET signal (an inline WRITE) could
// overtake the data at the target: the transport refuses that configuration (IbgdaConfig).
__device__ inline __noinline__ int put_signal(const DeviceView* v, DeviceQp* qp, int peer, uint64_t dst, uint64_t src,
                                          uint64_t bytes, uint64_t sig_offset, uint32_t sig_op, uint64_t value) {
  if (sig_op != SIGNAL_ADD) {
    int st = check_set_signal(v, qp, OP_PUT_SIGNAL, peer, sig_offset);
    if (st != OK) return st;
  }
  const uint32_t n = chunks(bytes);
  uint64_t base;
  int st = reserve(v, qp, n + signal_wqebbs(sig_op), OP_PUT_SIGNAL, peer, &base);
  if (st != OK) return st;
  write_rdma_chunks(qp, base, mlx5::Mlx5Opcode::RDMA_WRITE, qp->remote_base + dst, qp->rkey, qp->local_base + src,
                    qp->lkey, bytes);
  const uint32_t used = write_signal(qp, base + n, sig_offset, sig_op, value);
  return publish(v, qp, base, n + used, OP_PUT_SIGNAL, peer);
}

// A relaxed signal: ordered after earlier WQEs on this QP (RC order), not with this thread's plain stores.
__device__ inline __noinline__ int signal(const DeviceView* v, DeviceQp* qp, int peer, uint32_t op_code, uint64_t sig_offset,
                                      uint32_t sig_op, uint64_t value) {
  if (sig_op != SIGNAL_ADD) {
    int st = check_set_signal(v, qp, op_code, peer, sig_offset);
    if (st != OK) return st;
  }
  uint64_t base;
  int st = reserve(v, qp, signal_wqebbs(sig_op), op_code, peer, &base);
  if (st != OK) return st;
  const uint32_t used = write_signal(qp, base, sig_offset, sig_op, value);
  return publish(v, qp, base, used, op_code, peer);
}

// The 16-byte inline slot (layout/inline_slot.cuh) in one inline WRITE. The NIC writes it as one PCIe write; the
// emulated NIC as two 8-byte stores, one per half, which the slot's rule tolerates (wait_inline wants the same
// sequence in both halves).
__device__ inline __noinline__ int put_inline(const DeviceView* v, DeviceQp* qp, int peer, uint64_t slot_offset,
                                          uint64_t value, uint32_t seq) {
  int st = check_inline(v, qp, OP_PUT_INLINE, peer, slot_offset, InlineSlotDescriptor::SIZE);
  if (st != OK) return st;
  const uint32_t wqebbs = mlx5::WqeDescriptor::wqebbs_for_ds(mlx5::WqeDescriptor::inline_ds(InlineSlotDescriptor::SIZE));
  uint64_t base;
  st = reserve(v, qp, wqebbs, OP_PUT_INLINE, peer, &base);
  if (st != OK) return st;
  const uint64_t slot[2] = {InlineSlotDescriptor::half((uint32_t)value, seq),
                            InlineSlotDescriptor::half((uint32_t)(value >> 32), seq)};
  const uint32_t used = mlx5::write_rdma_write_inline(sq_of(qp), qp->sq_wqebbs, base, qp->qpn,
                                                      SIGNALED | fence_flag(qp, base),
                                                      qp->remote_base + slot_offset, qp->rkey,
                                                      reinterpret_cast<const uint8_t*>(slot), InlineSlotDescriptor::SIZE);
  note_size(qp, base, used);
  return publish(v, qp, base, used, OP_PUT_INLINE, peer);
}

// Waits until every WQE published on qp so far has completed (checking each CQE), without the flush.
__device__ inline __noinline__ int drain(const DeviceView* v, DeviceQp* qp, uint32_t op, int peer) {
  // Acquire: includes every WQE this thread published (and any other thread published before this load).
  const uint64_t target = load_acquire_gpu(&qp->ready_head);
  Deadline d;
  for (uint32_t spins = 1;; ++spins) {
    int st = poll_cq(v, qp, op, peer);
    if (st != OK) return st;
    const uint64_t cons = load_acquire_gpu(&qp->cons_head);
    if (cons >= target) return OK;
    if (spins % POLLS_PER_LOOK == 0) {
      st = detail::stall(v, &d, ERROR_POST_TIMEOUT, op, peer, cons, target, cons, qp->qpn);
      if (st != OK) return st;
    }
  }
}

// PCIe flush: an ATOMIC_FA of 1 on this rank's flush flag through the loopback QP, its fetched value dropped by the
// null MR (or left in the scratch word). The non-posted atomic cannot pass the NIC's earlier posted writes into this
// GPU, so once it completes everything the NIC wrote here before it is visible.
__device__ inline __noinline__ int flush(const DeviceView* v, const DeviceQp* data_qp, int peer) {
  DeviceQp* fqp = reinterpret_cast<DeviceQp*>(data_qp->flush_qp);
  uint64_t base;
  int st = reserve(v, fqp, 1, OP_QUIET, peer, &base);
  if (st != OK) return st;
  mlx5::write_atomic_fetch_add(sq_of(fqp), fqp->sq_wqebbs, base, fqp->qpn, SIGNALED, data_qp->flush_flag,
                               data_qp->flush_rkey, 1, data_qp->discard_addr, data_qp->discard_lkey);
  note_size(fqp, base, 1);
  st = publish(v, fqp, base, 1, OP_QUIET, peer);
  if (st == OK) st = drain(v, fqp, OP_QUIET, peer);
  return st;
}

// Only READs land data in this GPU that a kernel then reads (signals' fetched values are discarded), so the flush is
// needed only when a get was published since the last flush. `gets` is gets_posted loaded (acquire) before the
// drain that completed those gets; a flush posted after that drain covers them.
__device__ inline __noinline__ int flush_after_gets(const DeviceView* v, const DeviceQp* data_qp, int peer,
                                                    uint64_t gets) {
  DeviceQp* fqp = reinterpret_cast<DeviceQp*>(data_qp->flush_qp);
  if (gets <= load_relaxed_gpu(&fqp->gets_flushed)) return OK;
  int st = flush(v, data_qp, peer);
  if (st == OK) atomicMax(reinterpret_cast<unsigned long long*>(&fqp->gets_flushed), (unsigned long long)gets);
  return st;
}

__device__ __forceinline__ bool flushes_on_quiet(const DeviceQp* qp) {
  return (qp->flags & FLAG_FLUSH_ON_QUIET) && qp->flush_qp != 0;
}

__device__ __forceinline__ uint64_t gets_posted(const DeviceQp* data_qp) {
  return load_acquire_gpu(&reinterpret_cast<DeviceQp*>(data_qp->flush_qp)->gets_posted);
}

// Everything published on qp is complete (and, with FLAG_FLUSH_ON_QUIET, what its gets fetched is visible in this
// GPU's memory).
__device__ inline __noinline__ int quiet(const DeviceView* v, DeviceQp* qp, int peer) {
  const bool flushes = flushes_on_quiet(qp);
  const uint64_t gets = flushes ? gets_posted(qp) : 0;
  int st = drain(v, qp, OP_QUIET, peer);
  if (st == OK && flushes) st = flush_after_gets(v, qp, peer, gets);
  return st;
}

// ---- several QPs per peer -------------------------------------------------------------------------------------
// A peer may be reached over qp_count QPs (an array of DeviceQps, device_qp.cuh). Each QP keeps its own WQEs
// in order (RC); nothing orders WQEs of two QPs. So: the calls a caller makes on one QP are in order, put_signal's
// signal covers its own data (one QP), and a signal that must cover data posted on another QP of the peer needs
// fence_qps (what fence(peer) does over several QPs) between them: it waits until every WQE published on the peer's
// other QPs before it has completed, so their data is at the peer before anything the caller posts after it.

// The QP of `base`'s array that `key` (a warp, a channel) posts on.
__device__ __forceinline__ DeviceQp* qp_for(DeviceQp* base, uint32_t key) {
  const uint32_t n = base->qp_count;
  return n <= 1 ? base : base + key % n;
}

// The first entry of the array `qp` belongs to.
__device__ __forceinline__ DeviceQp* qp_base(DeviceQp* qp) { return qp - qp->qp_index; }

// Every QP of `qp`'s array but `qp` itself drained: what was published on them before this call has completed.
__device__ inline __noinline__ int fence_qps(const DeviceView* v, DeviceQp* qp, int peer) {
  DeviceQp* base = qp_base(qp);
  const uint32_t n = base->qp_count;
  for (uint32_t i = 0; i < n; ++i) {
    if (base + i == qp) continue;
    const int st = drain(v, base + i, OP_FENCE, peer);
    if (st != OK) return st;
  }
  return OK;
}

// ---- scoped forms: one thread posts for the group after a barrier that makes the group's stores its own --------

__device__ __forceinline__ uint32_t lane() {
  uint32_t l;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}

__device__ __forceinline__ uint32_t block_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

}  // namespace ibgda
}  // namespace gda4j
#endif  // __CUDACC__ || GDA4J_HOST_MODEL

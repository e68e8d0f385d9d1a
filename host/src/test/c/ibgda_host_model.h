// gda4j/transport/ibgda/qp.cuh built for the host (g++, no CUDA): what the header takes from CUDA and from
// core/memory_model.cuh, core/errors.cuh and core/deadline.cuh, for host threads standing in for GPU threads.
// ibgda_qp_host.cpp compiles the header with -DGDA4J_HOST_MODEL='"ibgda_host_model.h"'; the header includes this file
// in place of those three. Each ordered access keeps its ordering (a GPU-scope acquire is a C++ acquire, a
// system-scope fence a seq_cst fence), and every store that reaches the NIC (the doorbell record, the doorbell, the
// CQ's consumer index) and every system-scope fence goes through a hook of the model NIC, which checks their order.
#pragma once
#include <stdint.h>

#include <atomic>
#include <chrono>
#include <thread>

#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))

// ---- the model NIC's hooks (ibgda_qp_host.cpp) -----------------------------------------------------------------
namespace gda4j_model {
void on_dbrec_store(void* word, uint32_t be_counter);  // st.release.sys of the doorbell record's send counter
void on_doorbell(void* uar, uint64_t value);           // st.mmio.relaxed.sys of the 8-byte doorbell
void on_fence_system();                                // fence.sc.sys (__threadfence_system)
}  // namespace gda4j_model

// ---- CUDA built-ins --------------------------------------------------------------------------------------------
struct dim3 {
  unsigned int x = 0, y = 0, z = 0;
};
inline thread_local dim3 threadIdx, blockIdx, blockDim{1, 1, 1}, gridDim{1, 1, 1};

// CUDA's atomics are relaxed read-modify-writes.
inline uint32_t atomicCAS(uint32_t* p, uint32_t expected, uint32_t desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
}
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long expected, unsigned long long desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
}
inline uint32_t atomicExch(uint32_t* p, uint32_t v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
  unsigned long long old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  gda4j_model::on_fence_system();
}
inline uint64_t min(uint64_t a, uint64_t b) { return a < b ? a : b; }

namespace gda4j {

// ---- core/memory_model.cuh (the accessors qp.cuh uses) -------------------------------------------------------
inline uint64_t load_acquire_gpu(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline uint64_t load_relaxed_gpu(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
inline void store_release_gpu(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline void store_relaxed_gpu(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
inline void store_relaxed_sys_u32(void* p, uint32_t v) {
  __atomic_store_n(static_cast<uint32_t*>(p), v, __ATOMIC_RELAXED);
}
inline uint32_t load_relaxed_u8(const uint8_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
inline void fence_acq_rel_sys() { __atomic_thread_fence(__ATOMIC_ACQ_REL); }
inline uint64_t load_volatile(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
inline void store_relaxed_sys(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }

// ---- core/deadline.cuh: the same policy on the host's clock; a look also yields, since host threads may outnumber
// the cores (a preempted reservation holder must get to run) ------------------------------------------------------
constexpr uint32_t POLLS_PER_LOOK = 1024;
struct Deadline {
  uint64_t start = 0;
  uint64_t elapsed = 0;
};
inline uint64_t global_timer_ns() {
  return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline int look(const uint64_t* abort_flag, uint64_t timeout_ns, Deadline* d) {
  std::this_thread::yield();
  const uint64_t now = global_timer_ns();
  if (d->start == 0) d->start = now;
  if (abort_flag != nullptr && load_volatile(abort_flag) != 0) return ERR_ABORTED;
  d->elapsed = now - d->start;
  return d->elapsed > timeout_ns ? ERR_TIMEOUT : OK;
}

// ---- core/errors.cuh: the record and the abort flag, as the device writes them ----------------------------------
inline void raise_abort(const DeviceView* v) {
  store_relaxed_sys(reinterpret_cast<uint64_t*>(v->abort_flag), 1);
}
inline void record_error(const DeviceView* v, uint32_t code, uint32_t op, int peer, uint64_t offset,
                         uint64_t expected, uint64_t seen, uint32_t cmp, uint64_t elapsed_ns) {
  ErrorRecord* rec = reinterpret_cast<ErrorRecord*>(v->error_record);
  if (atomicCAS(&rec->claimed, 0u, 1u) == 0u) {
    rec->rank = v->rank;
    rec->peer = peer;
    rec->op = op;
    rec->offset = offset;
    rec->expected = expected;
    rec->seen = seen;
    rec->elapsed_ns = elapsed_ns;
    rec->cmp = cmp;
    __atomic_store_n(&rec->code, code, __ATOMIC_RELEASE);
  }
  raise_abort(v);
}
inline int fail(const DeviceView* v, int status, uint32_t code, uint32_t op, int peer, uint64_t offset,
                uint64_t expected, uint64_t seen) {
  record_error(v, code, op, peer, offset, expected, seen, 0, 0);
  return status;
}

// ---- layout/mlx5.cuh's ordered stores and loads (its CUDA-only part) --------------------------------------------
namespace mlx5 {
inline void store_dbr_send_counter_release(void* dbrec, uint64_t pi) {
  uint32_t* word = reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(dbrec)
                                               + DoorbellRecordDescriptor::SEND_COUNTER_OFFSET);
  __atomic_store_n(word, dbr_send_counter(pi), __ATOMIC_RELEASE);
  gda4j_model::on_dbrec_store(word, dbr_send_counter(pi));
}
inline void store_doorbell_mmio(void* uar, uint64_t pi, uint32_t qpn) {
  gda4j_model::on_doorbell(uar, doorbell_value(pi, qpn));
}
inline uint64_t load_cqe_tail_acquire(const void* cqe) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(static_cast<const uint8_t*>(cqe)
                                                           + CqeDescriptor::TAIL_OFFSET), __ATOMIC_ACQUIRE);
}
}  // namespace mlx5

namespace ibgda {
namespace detail {
inline void fence_acq_rel_gpu() { __atomic_thread_fence(__ATOMIC_ACQ_REL); }
}  // namespace detail
}  // namespace ibgda

}  // namespace gda4j

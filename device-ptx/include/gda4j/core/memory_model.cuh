// Thin wrappers over the PTX memory-model instructions gda4j relies on. Each name says its ordering:
// a *_release store pairs with an *_acquire load of the same word on the other side.
#pragma once
#include <stdint.h>

namespace gda4j {

__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Pairs with store_release_sys / red_add_release_sys on another GPU or on the host (getLongAcquire).
__device__ __forceinline__ uint64_t load_acquire_sys(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// A relaxed poll: sees other agents' stores eventually, orders nothing. Follow a successful poll with
// fence_acquire_sys to turn it into an acquire.
__device__ __forceinline__ uint64_t load_relaxed_sys(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// Orders everything this thread (and, through bar.sync cumulativity, its block) wrote before it ahead of
// the stored value, for any observer in the system. Pairs with load_acquire_sys.
__device__ __forceinline__ void store_release_sys(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void store_relaxed_sys(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void red_add_release_sys(uint64_t* p, uint64_t v) {
  asm volatile("red.release.sys.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void red_add_relaxed_sys(uint64_t* p, uint64_t v) {
  asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

// Full system-scope fence: prior loads/stores of this thread are ordered before later ones for all observers.
__device__ __forceinline__ void fence_acq_rel_sys() {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}

// Turns an earlier relaxed load that observed a release into an acquire (the PTX "acquire pattern").
__device__ __forceinline__ void fence_acquire_sys() {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}

// 16-byte inline slot accesses (gda4j/inline_slot.cuh): the slot is two 64-bit elements, each half {data32, seq32}
// one element, stored and loaded with one v2.u64 access. The PTX memory model makes each aligned element of a vector
// access single-copy atomic (a v4.u32 access would be four 32-bit accesses), so a half is never torn; nothing makes the
// two halves one access, which is why readers compare the sequences of both. Relaxed: no other ordering.
__device__ __forceinline__ void store_slot_relaxed_sys(uint64_t* p, uint64_t lo_half, uint64_t hi_half) {
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" :: "l"(p), "l"(lo_half), "l"(hi_half) : "memory");
}

__device__ __forceinline__ void load_slot_relaxed_sys(const uint64_t* p, uint64_t& lo_half, uint64_t& hi_half) {
  asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];" : "=l"(lo_half), "=l"(hi_half) : "l"(p) : "memory");
}

// GPU-scope acquire: pairs with red_max_release_gpu / atomics of other threads of this GPU (not with the host).
__device__ __forceinline__ uint64_t load_acquire_gpu(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// GPU-scope relaxed accesses and release store: for words only the threads of one GPU share (a QP's producer and
// consumer state). They order nothing for the host or other GPUs.
__device__ __forceinline__ uint64_t load_relaxed_gpu(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_release_gpu(uint64_t* p, uint64_t v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void store_relaxed_gpu(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void store_relaxed_sys_u32(void* p, uint32_t v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t load_relaxed_u8(const uint8_t* p) {
  uint16_t v;
  asm volatile("ld.relaxed.gpu.global.u8 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
  return v;
}

// Raises *p to at least v; a release at GPU scope, so what this thread acquired before is visible to a thread that
// acquires the new value with load_acquire_gpu.
__device__ __forceinline__ void red_max_release_gpu(uint64_t* p, uint64_t v) {
  asm volatile("red.release.gpu.global.max.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

// Adds v to *p and returns the old value; acquire and release at GPU scope. A chain of these on one word is a
// release sequence: the thread that reads the last value has everything the earlier adders saw before their adds
// in its causality past, and a system-scope fence or release after it carries all of it to other GPUs (PTX
// causality order is transitive across scopes, each link being morally strong).
__device__ __forceinline__ int32_t atom_add_acq_rel_gpu(int32_t* p, int32_t v) {
  int32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}

// One 16-byte store of {w0, w1} (p 16-byte aligned), released at system scope: pairs with the host's acquire load
// of either word. The hardware writes both halves in one transaction, but the memory model does not promise that,
// so readers check a flag in each half (the proxy FIFO's lap bits, the LL slots).
__device__ __forceinline__ void store_pair_release_sys(uint64_t* p, uint64_t w0, uint64_t w1) {
  asm volatile("st.release.sys.global.v2.u64 [%0], {%1, %2};" :: "l"(p), "l"(w0), "l"(w1) : "memory");
}

// The same 16-byte store, relaxed: after a fence_acq_rel_sys it publishes like a release.
__device__ __forceinline__ void store_pair_relaxed_sys(uint64_t* p, uint64_t w0, uint64_t w1) {
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" :: "l"(p), "l"(w0), "l"(w1) : "memory");
}

__device__ __forceinline__ uint64_t load_volatile(const uint64_t* p) {
  return *reinterpret_cast<const volatile uint64_t*>(p);
}

__device__ __forceinline__ void store_volatile(uint64_t* p, uint64_t v) {
  *reinterpret_cast<volatile uint64_t*>(p) = v;
}

}  // namespace gda4j

// The emulated NIC's helper kernel (io.gda4j.nic.emulated.CudaQpExecutor): one 8-byte RDMA atomic, launched with one
// thread on the QP's stream so it runs after the WQEs before it and before the CQE store queued after it.
#include <stdint.h>
#include <gda4j/layout/mlx5.cuh>
#include <gda4j/core/memory_model.cuh>
#include <gda4j/core/deadline.cuh>

// Opcode 0 (not an mlx5 atomic) stores swap_add: the fallback for an 8-byte inline store where the driver refuses a
// stream write to that address. ATOMIC_FA adds swap_add; ATOMIC_CS stores swap_add if the word equals compare. The old value goes to fetch_dst
// (any alignment), or nowhere when fetch_dst is 0 (the null MR drops it). System scope: the target may be a peer
// GPU's memory (peer access) or mapped host memory, and its owner may be polling it.
//
// split_ns > 0 (strict atomics, EmulatedNicConfig.strictAtomics): the atomic is what a NIC's atomic is to the GPU, a
// read of the word, a pause (the PCIe round trip; here split_ns of spinning), and a write: a GPU atomic on the same
// word in between is overwritten and lost. The engine chains these kernels NIC-wide (CudaPlatform), so NIC atomics
// stay atomic with each other, as a responder NIC's are; only other writers of the word lose.
//
// lock != 0 (a split atomic on memory that other processes' emulated NICs also add to; EmulatedNic.serializeAtomics):
// the chain orders one process's atomics only, so the split runs while holding the responder's lock word, which every
// process's atomic kernel takes (a CAS from 0 to 1, released by an exchange to 0). The lock line is 16 bytes: the
// lock word, then a count of locks broken. A holder that never releases (its process was killed inside this kernel)
// must not hang the others: after lock_timeout_ns of waiting the lock is taken anyway and the count raised, which
// the host reports (EmulatedNic.ATOMIC_LOCK_BROKEN_OFFSET); the world is failing by then (a rank died).
extern "C" __global__ void gda4j_emulated_nic_atomic(uint32_t opcode, uint64_t target, uint64_t swap_add,
                                                     uint64_t compare, uint64_t fetch_dst, uint64_t split_ns,
                                                     uint64_t lock, uint64_t lock_timeout_ns) {
  unsigned long long* word = reinterpret_cast<unsigned long long*>(target);
  unsigned long long old;
  if (opcode == 0) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(word), "l"(swap_add) : "memory");
    __threadfence_system();
    return;
  }
  unsigned long long* lock_word = reinterpret_cast<unsigned long long*>(lock);
  if (split_ns != 0 && lock_word != nullptr) {
    // The lock is host memory: a look every HOST_POLLS_PER_LOOK tries (core/deadline.cuh; no world's abort flag).
    gda4j::Deadline d;
    for (uint32_t tries = 1; atomicCAS_system(lock_word, 0ull, 1ull) != 0ull; ++tries) {
      if (tries % gda4j::HOST_POLLS_PER_LOOK == 0 && gda4j::look(nullptr, lock_timeout_ns, &d) != gda4j::OK) {
        atomicAdd_system(lock_word + 1, 1ull);
        break;
      }
    }
    __threadfence_system();  // acquire: the previous holder's write of the word is seen by the read below
  }
  if (split_ns != 0) {
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(old) : "l"(word) : "memory");
    const uint64_t start = gda4j::global_timer_ns();
    while (gda4j::global_timer_ns() - start < split_ns) {
    }
    const bool writes = opcode == gda4j::mlx5::Mlx5Opcode::ATOMIC_FA || old == (unsigned long long)compare;
    const unsigned long long now = opcode == gda4j::mlx5::Mlx5Opcode::ATOMIC_FA ? old + swap_add : swap_add;
    if (writes) asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(word), "l"(now) : "memory");
    if (lock_word != nullptr) {
      __threadfence_system();  // release: the write above is visible before the next holder's read
      atomicExch_system(lock_word, 0ull);
    }
  } else if (opcode == gda4j::mlx5::Mlx5Opcode::ATOMIC_FA) {
    old = atomicAdd_system(word, (unsigned long long)swap_add);
  } else {
    old = atomicCAS_system(word, (unsigned long long)compare, (unsigned long long)swap_add);
  }
  if (fetch_dst != 0) {
    uint8_t* out = reinterpret_cast<uint8_t*>(fetch_dst);
    if ((fetch_dst & 7) == 0) {
      *reinterpret_cast<unsigned long long*>(out) = old;
    } else {
      for (int i = 0; i < 8; ++i) out[i] = (uint8_t)(old >> (8 * i));
    }
  }
  // Everything above is visible system-wide before the stream's next operation (the CQE store) runs.
  __threadfence_system();
}

// Kernels the host proxy launches on its own CUDA streams (io.gda4j.proxy.CopyEngineHandler), not device API users.
#include <stdint.h>

// The SIGNAL ADD / ATOMIC_ADD of a trigger: one thread adds `value` to the 64-bit word at `word` (the peer's heap as
// the launching GPU addresses it). Stream order puts it after the copies queued before it; system scope, so the
// peer's wait_until sees it as it sees a direct peer's red.add. Launch 1 x 1.
extern "C" __global__ void gda4j_proxy_atomic_add(unsigned long long* word, unsigned long long value) {
  atomicAdd_system(word, value);
}

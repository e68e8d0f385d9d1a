// The benchmark's launch gate (io.gda4j.samples.moe.LaunchGate), one thread: holds back the work queued behind it on
// its stream until the host word `gate` (mapped pinned memory) reaches `want`, or until timeout_ns have passed (the
// deadline policy of gda4j/core/deadline.cuh; no world's abort flag: the gate belongs to the benchmark, not to a
// world). The timeout keeps a profiler that runs each kernel alone before the host may go on (ncu) from waiting for
// ever for a gate the host cannot open yet: the gate then opens by itself, and only the timing suffers.
//   nvcc -std=c++17 -arch=sm_90 -ptx -I device-ptx/include samples/kernels/launch_gate.cu -o launch_gate.ptx
#include <gda4j/gda4j.cuh>

using namespace gda4j;

extern "C" __global__ void launch_gate(const uint64_t* gate, uint64_t want, uint64_t timeout_ns) {
  Deadline d;
  do {
    for (uint32_t k = 0; k < HOST_POLLS_PER_LOOK; ++k) {
      if (load_acquire_sys(gate) >= want) return;
      __nanosleep(128);
    }
  } while (look(nullptr, timeout_ns, &d) == OK);
}

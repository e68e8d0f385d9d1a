// The benchmark's launch gate (io.gda4j.samples.moe.LaunchGate), one thread: holds back the work queued behind it on
// its stream until the host word `gate` (mapped pinned memory) reaches `want`, or until timeout_ns have passed (the
// deadline policy of gda4j/core/deadline.cuh; no world's abort flag: the gate belongs to the benchmark, not to a
// world). The timeout keeps a profiler that runs each kernel alone before the host may go on (ncu) from waiting for
// ever for a gate the host cannot open yet: the gate then opens by itself, and only the timing suffers.
//   nvcc -std=c++17 -arch=sm_90 -ptx -I device-ptx/include samples/kernels/launch_gate.cu -o launch_gate.ptx
#include <gda4j/gda4j.cuh>

using namespace gda4j;

namespace launch {
// Until the host word reaches `want` or timeout_ns have passed.
__device__ __forceinline__ void wait_for_host(const uint64_t* gate, uint64_t want, uint64_t timeout_ns) {
  Deadline d;
  do {
    for (uint32_t k = 0; k < HOST_POLLS_PER_LOOK; ++k) {
      if (load_acquire_sys(gate) >= want) return;
      __nanosleep(128);
    }
  } while (look(nullptr, timeout_ns, &d) == OK);
}
}  // namespace launch

extern "C" __global__ void launch_gate(const uint64_t* gate, uint64_t want, uint64_t timeout_ns) {
  launch::wait_for_host(gate, want, timeout_ns);
}

// The gate and then the start line of a step, in one kernel: behind the host word, add 1 to the word `arrivals` in
// every peer's heap, then wait until this rank's own word has counted `want` gates of every peer. One kernel, not a
// kernel per signal and one for the wait: each kernel boundary in the line delayed this rank's side of it by a launch
// while its peers' sides went on, and the step counted that skew (a low-latency dispatch of one token took 0.020 ms
// in two processes against 0.018 in one; 0.018 with this kernel). Status (OK or the first error) goes to
// *status_out, the last value the wait read to *seen_out.
extern "C" __global__ void launch_gate_start_line(const uint64_t* gate, uint64_t want, uint64_t timeout_ns,
                                                  const DeviceView* v, uint64_t arrivals, int* status_out,
                                                  uint64_t* seen_out) {
  launch::wait_for_host(gate, want, timeout_ns);
  const int me = v->rank;
  int st = OK;
  for (int peer = 0; peer < v->nranks && st == OK; ++peer) {
    if (peer != me) st = signal(v, peer, arrivals, SIGNAL_ADD, 1);
  }
  // A proxy or IBGDA signal is queued, not stored: push it out now, as the peers wait for it. A direct peer's signal
  // is a store already on its way, which a flush would only follow with a fence.
  for (int peer = 0; peer < v->nranks && st == OK; ++peer) {
    if (peer != me && !is_direct(peer_of(v, peer))) st = flush(v, peer);
  }
  uint64_t seen = 0;
  if (st == OK) st = wait_until(v, arrivals, CMP_GE, want * static_cast<uint64_t>(v->nranks - 1), &seen);
  *seen_out = seen;
  *status_out = st;
}

// A ring all-gather written the way a gda4j user writes a collective: one block per rank, the device API's
// block-scoped put_signal and wait_until, nothing else. Built into PTX that the Java driver loads as the user's own
// module (io.gda4j.samples.RingAllGather); the command that builds it is in README.md:
//   nvcc -std=c++17 -arch=sm_90 -ptx -I device-ptx/include samples/kernels/ring_allgather.cu -o ring_allgather.ptx
//
// Layout: every rank's heap holds n chunks of chunk_bytes at buf_offset; rank r contributes chunk r. In step s
// (0 <= s < n-1) rank r forwards chunk (r - s) mod n, which it owns or received in step s-1, to rank r+1, and then
// waits for chunk (r - s - 1) mod n from rank r-1. The signal word counts steps across calls: call number `round`
// (1, 2, ...) uses the values (round-1)*(n-1)+1 .. round*(n-1), so no reset is needed between calls.
#include <gda4j/gda4j.cuh>

using namespace gda4j;

extern "C" __global__ void ring_allgather(const DeviceView* view, uint64_t buf_offset, uint64_t chunk_bytes,
                                          uint64_t sig_offset, uint64_t round, int* status_out) {
  const Local me = local_of(view);
  const int n = view->nranks;
  const int r = view->rank;
  const Peer next = peer_of(view, (r + 1) % n);
  const uint64_t base = (round - 1) * (uint64_t)(n - 1);
  int st = OK;
  for (int s = 0; s < n - 1 && st == OK; ++s) {
    const uint64_t chunk = (uint64_t)((r - s + n) % n);
    const uint64_t at = buf_offset + chunk * chunk_bytes;
    // The data, then the step number released after it: the next rank's wait sees the chunk whole.
    st = put_signal_block(next, at, at, chunk_bytes, sig_offset, SIGNAL_SET, base + s + 1);
    // Acquire: the chunk rank r-1 sent in this step is visible to the whole block once this returns OK.
    if (st == OK) st = wait_until_block(me, sig_offset, CMP_GE, base + s + 1);
  }
  if (threadIdx.x == 0) *status_out = st;
}

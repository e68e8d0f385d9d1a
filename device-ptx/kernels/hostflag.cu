// Host-written flags (io.gda4j.hostflag): the kernels behind `gda4j hostflag` and HostFlagGpuTest.
// The flag is an io.gda4j.gdrcopy.HostWritableGpuWord: device memory the host stores to through gdrcopy or
// cuStreamWriteValue64, or pinned host memory mapped into the GPU. The kernel cannot tell which: it polls the
// flag's address with ld.acquire.sys, which pairs with the word's putLongRelease on the host.
//
// Launch 1 block of 1 thread. Every spin gives up after timeout_ns without news (core/deadline.cuh: the flag may be
// host memory, so a look every HOST_POLLS_PER_LOOK polls; these kernels belong to no world, so there is no abort
// flag), so a flag nobody writes ends the kernel with ERR_TIMEOUT instead of a hang.
// On exit the kernel stores the last flag value it read to *seen_out, then its status to *status_out with
// st.release.sys: the host sets *status_out to STATUS_RUNNING before the launch and polls it with getLongAcquire.
// Statuses (int64, mirrored by io.gda4j.hostflag.FlagEcho): OK, ERR_TIMEOUT, ERR_RANGE (the observe array filled
// up), STATUS_STOPPED (the host stored FLAG_STOP).
#include <gda4j/layout/view.cuh>
#include <gda4j/core/memory_model.cuh>
#include <gda4j/core/deadline.cuh>

using namespace gda4j;

namespace {

constexpr uint64_t FLAG_STOP = ~0ull;            // the host's "stop now" value (FlagEcho.FLAG_STOP, -1 in Java)
constexpr int STATUS_STOPPED = 2;                // the kernel saw FLAG_STOP and returned early

// Polls *flag until it is >= want (unsigned), for at most timeout_ns. Acquire: the host stores made before the
// flag's putLongRelease are visible afterwards. *seen = the last value read.
__device__ __forceinline__ int wait_at_least(const uint64_t* flag, uint64_t want, uint64_t timeout_ns,
                                             uint64_t* seen) {
  Deadline d;
  for (uint32_t polls = 1;; ++polls) {
    const uint64_t v = load_acquire_sys(flag);
    if (v >= want) {
      *seen = v;
      return OK;
    }
    if (polls % HOST_POLLS_PER_LOOK == 0 && look(nullptr, timeout_ns, &d) != OK) {
      *seen = v;
      return ERR_TIMEOUT;
    }
  }
}

// As wait_at_least, until *flag differs from `previous`.
__device__ __forceinline__ int wait_change(const uint64_t* flag, uint64_t previous, uint64_t timeout_ns,
                                           uint64_t* seen) {
  Deadline d;
  for (uint32_t polls = 1;; ++polls) {
    const uint64_t v = load_acquire_sys(flag);
    if (v != previous) {
      *seen = v;
      return OK;
    }
    if (polls % HOST_POLLS_PER_LOOK == 0 && look(nullptr, timeout_ns, &d) != OK) {
      *seen = v;
      return ERR_TIMEOUT;
    }
  }
}

// The last value read, then the status, released after it (and after every echo or record before it).
__device__ __forceinline__ void report(uint64_t* seen_out, uint64_t seen, uint64_t* status_out, int status) {
  store_relaxed_sys(seen_out, seen);
  store_release_sys(status_out, static_cast<uint64_t>(static_cast<int64_t>(status)));
}

}  // namespace

// Round trips: for i = first .. first + count - 1, wait until the flag is >= i, then answer by storing i to *echo
// (mapped pinned host memory; the host polls it with getLongAcquire) with st.release.sys.
extern "C" __global__ void gda4j_flag_echo(const uint64_t* flag, uint64_t* echo, uint64_t first, uint64_t count,
                                           uint64_t timeout_ns, uint64_t* seen_out, uint64_t* status_out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int st = OK;
  uint64_t seen = 0;
  for (uint64_t n = 0; n < count; ++n) {
    const uint64_t i = first + n;
    st = wait_at_least(flag, i, timeout_ns, &seen);
    if (st != OK) break;
    if (seen == FLAG_STOP) {
      st = STATUS_STOPPED;
      break;
    }
    store_release_sys(echo, i);
  }
  report(seen_out, seen, status_out, st);
}

// Records every distinct value the flag takes, in the order observed, into values[0 .. capacity), until a value
// >= last (unsigned) is seen; the number recorded goes to *count_out. `initial` is what the flag holds before the
// host starts writing (it is not recorded). When echo is not null each recorded value is also stored to *echo with
// st.release.sys, so a host that waits for the echo before its next store makes the kernel see every value.
extern "C" __global__ void gda4j_flag_observe(const uint64_t* flag, uint64_t initial, uint64_t last,
                                              uint64_t* values, uint32_t capacity, uint64_t* echo,
                                              uint64_t timeout_ns, uint64_t* count_out, uint64_t* seen_out,
                                              uint64_t* status_out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int st = OK;
  uint64_t previous = initial;
  uint64_t seen = initial;
  uint32_t n = 0;
  while (previous < last) {
    st = wait_change(flag, previous, timeout_ns, &seen);
    if (st != OK) break;
    if (n == capacity) {
      st = ERR_RANGE;
      break;
    }
    values[n++] = seen;
    if (echo != nullptr) store_release_sys(echo, seen);
    previous = seen;
  }
  store_relaxed_sys(count_out, n);
  report(seen_out, seen, status_out, st);
}

// gda4j/core/deadline.cuh: the one policy every device-side wait follows (the public waits, the transports' slow
// paths, the MoE kernels' waits through wait_until, the standalone flag and gate kernels).
//
// A wait polls its word in batches. Between two batches it looks (look(), out of line, so the poll loop around it
// stays small): first at the world's abort flag (another rank or the host gave up: return ERR_ABORTED, with no record
// of its own), then at the clock. The first look starts the clock, so a wait whose word is already there never reads
// %globaltimer; the wait gives up with ERR_TIMEOUT once timeout_ns have passed since that first look, and the caller
// records what it waited for.
//
// How many polls go between two looks depends on where the polled word lives, and on nothing else:
//   - this GPU's memory (the heap, a queue's counters, a proxy channel's `done`): POLLS_PER_LOOK. A look reads the
//     abort word, which is in pinned host memory, across PCIe. With a look every 64 polls the hundreds of warps a MoE
//     kernel keeps waiting spent half their wait on those reads, and the warps copying beside them waited ~4x longer
//     for their loads (ncu): one rank's MoE combine of 4096 tokens on an H100 went from 7.6 to 0.57 ms with 1024
//     polls, still well under a millisecond between looks.
//   - host memory (a proxy FIFO's tail, a host-written flag, a launch gate): HOST_POLLS_PER_LOOK. Each poll already
//     crosses PCIe (about a microsecond), so a few of them take longer than a look.
#pragma once
#include <stdint.h>
#include "../layout/view.cuh"
#include "memory_model.cuh"

namespace gda4j {

constexpr uint32_t POLLS_PER_LOOK = 1024;
constexpr uint32_t HOST_POLLS_PER_LOOK = 4;
// Polls of a batch issued back to back (unrolled) where the word is read by a plain load: a loop with bookkeeping
// in it answers later.
constexpr uint32_t POLL_UNROLL = 8;

// The clock of one wait: `Deadline d;` before it, then look(abort_flag, timeout_ns, &d) between batches.
struct Deadline {
  uint64_t start = 0;    // %globaltimer at the first look; 0 before it
  uint64_t elapsed = 0;  // since the first look, as of the last one
};

// One look: ERR_ABORTED once the abort word is nonzero (abort_flag may be null: a kernel outside any world has
// none), ERR_TIMEOUT once timeout_ns have passed since the first look (d->elapsed says how long), else OK: keep
// polling.
__device__ inline __noinline__ int look(const uint64_t* abort_flag, uint64_t timeout_ns, Deadline* d) {
  const uint64_t now = global_timer_ns();
  if (d->start == 0) d->start = now;
  if (abort_flag != nullptr && load_volatile(abort_flag) != 0) return ERR_ABORTED;
  d->elapsed = now - d->start;
  return d->elapsed > timeout_ns ? ERR_TIMEOUT : OK;
}

}  // namespace gda4j

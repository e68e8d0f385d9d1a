// gda4j/moe/ll_tagged.cuh: the tagged protocol of the low-latency MoE kernels (kernels/moe_ll.cu), for worlds whose
// pairs are all direct (p2p, self): readiness travels in the data, so no sender fences per message and no receiver
// waits for a counter after the data. io.gda4j.moe.ll.LowLatencySizing draws the sections; the README says when it
// runs and what it costs.
//
// A tagged word is one u64: 4 bytes of data in the low half and the call's tag in the high half, the halves of an
// inline slot (layout/inline_slot.cuh). The tag is the low 32 bits of the call's sequence number on its buffer
// (seq[buffer], raised by every dispatch on it, the same on every rank): a word left by an older call on the same
// buffer carries an older tag, and the zeroed region tag 0, which no call has.
//
// What this relies on, and only this: the PTX memory model makes an aligned 64-bit access of a morally strong
// operation single-copy atomic, and models a vector access as accesses of its elements, so each u64 element of a
// st/ld.relaxed.sys.v2.u64 is whole or absent, never torn (a v4.u32 would be four 32-bit accesses, and a 16-byte or
// 128-byte line is not promised whole: NCCL's LL128 relies on NVLink delivering a warp's 128-byte store at once, which
// the model does not say, so nothing here does). Every word is stored relaxed at system scope and every word a
// receiver uses is loaded relaxed at system scope and checked for this call's tag: data and its readiness are one
// access, so no fence orders them and none is needed. A receiver never uses a word it did not check. The price is
// the bytes: 8 cross for every 4 of data.
//
// Sections of a buffer, at the receiver (heap offsets from LlParams; per source s):
//   tag_counts  [N source][tag_count_words]   word 0: n, the source's rows to this rank (its tokens with an expert
//                                             here); word 1: the source's rows to experts below this rank's first;
//                                             word 2 + le: its rows to local expert le; then a padding word to even
//   tag_rows    [N source][maxTokens][tag_row_words]  row i < n: the source's i-th token with an expert here:
//     word 0                 the source token t
//     word 1 + k             top-k entry k's place here, le x maxTokens + slot, or NO_PLACE (-1, a repeat, another
//                            rank, a bad entry)
//     tag_header_words ..    the payload, in 512-channel chunks of 32 x Q pairs (Q = 2 for FP8, 4 for BF16): pair
//                            c x 32Q + q x 32 + l holds bytes [D l + 8q, D l + 8q + 8) of chunk c (D = 8Q: the bytes
//                            lane l of a warp casts), so each store instruction of a warp writes 512 contiguous bytes
//     tag_scale_word ..      FP8 only: the scale of each 128-channel block, a word each
// The count vector comes from each source every call, zero or not, so a receiver knows how many rows to wait for; the
// rows are gathered: one per (token, rank), whatever the token's experts there, and the receiver copies each into
// every expert slot its header names, with the source record (s, t, k, send row) beside it.
//
// The combine's flags: one word per (buffer, expert rank) at every rank (LlSignalIndex::combine_rank_flag), SET to
// seq << 1 | pull by the expert rank's combine. Pulling, at the start of its combine (the expert outputs were
// written before it, and its dispatch receive is done); pushing, by the last of its blocks to store its rows (a
// GPU-scope arrival, then one system fence for them all). Every source waits for every rank's flag before it sums:
// the combine stays a barrier over all ranks, so no rank reuses a buffer while another still reads it.
#pragma once
#include <stdint.h>
#include "ll.cuh"

namespace gda4j {
namespace moe {

// A header entry that places the row nowhere at this rank.
constexpr uint32_t LL_NO_PLACE = 0xffffffffu;
// Channels of a payload chunk: those a warp casts in one step (ll_params.cuh: SEND_CHUNK).
constexpr int LL_TAG_CHUNK = (int)MoeLowLatencyParamsDescriptor::SEND_CHUNK;

__device__ __forceinline__ uint64_t tagged(uint32_t data, uint32_t tag) {
  return InlineSlotDescriptor::half(data, tag);
}
__device__ __forceinline__ uint32_t tag_of(uint64_t w) { return InlineSlotDescriptor::seq_of(w); }
__device__ __forceinline__ bool both_tagged(uint64_t lo, uint64_t hi, uint32_t tag) {
  return tag_of(lo) == tag && tag_of(hi) == tag;
}

// One tagged pair (16 bytes, 16-byte aligned) or word, stored relaxed at system scope (see the file comment).
__device__ __forceinline__ void store_tagged_pair(char* p, uint32_t d0, uint32_t d1, uint32_t tag) {
  store_slot_relaxed_sys(reinterpret_cast<uint64_t*>(p), tagged(d0, tag), tagged(d1, tag));
}
__device__ __forceinline__ void store_tagged_word(char* p, uint32_t d, uint32_t tag) {
  store_relaxed_sys(reinterpret_cast<uint64_t*>(p), tagged(d, tag));
}

// What tag_wait found: its status, the pair's (or the word's) last value, and the time it took where asked.
struct TagWait {
  int st;
  uint64_t lo, hi;
  uint64_t waited_ns;
};

// The wait for a tagged pair (or, with !pair, a word) of this rank's heap at `off` whose first load found another
// tag: polls until both words carry `tag`, under the deadline of every wait (core/deadline.cuh). On a timeout it
// records the word still missing (ERROR_WAIT_TIMEOUT, expected = tag, seen = the tag it carries) and the host names
// the peer from the offset (LowLatencySizing.wordAt). Out of line, and returning by value (no address of the
// caller's registers taken): the fast path is the caller's one load.
__device__ inline __noinline__ TagWait tag_wait(const DeviceView* view, uint64_t off, bool pair, uint32_t tag,
                                                bool timed) {
  const Local me = local_of(view);
  const uint64_t* p = reinterpret_cast<const uint64_t*>(me.heap + off);
  const uint64_t start = timed ? global_timer_ns() : 0;
  Deadline d;
  TagWait w{OK, 0, 0, 0};
  for (;;) {
    bool whole = false;
    for (uint32_t i = 0; i < POLLS_PER_LOOK && !whole; ++i) {
      if (pair) {
        load_slot_relaxed_sys(p, w.lo, w.hi);
      } else {
        w.lo = w.hi = load_relaxed_sys(p);
      }
      whole = both_tagged(w.lo, w.hi, tag);
    }
    if (whole) break;
    w.st = look(me.abort_flag, me.timeout_ns, &d);
    if (w.st == ERR_TIMEOUT) {
      const bool first_missing = tag_of(w.lo) != tag;
      record_error(view, ERROR_WAIT_TIMEOUT, OP_WAIT_UNTIL, me.rank, off + (first_missing ? 0 : 8), tag,
                   tag_of(first_missing ? w.lo : w.hi), CMP_EQ, d.elapsed);
    }
    if (w.st != OK) break;
  }
  if (timed) w.waited_ns = global_timer_ns() - start;
  return w;
}

// Loads the tagged pair (or word) at this rank's heap offset `off` and, where a word carries another tag, waits
// (tag_wait). Returns OK with the data in *d0 (and *d1), or the wait's status.
__device__ __forceinline__ int take_tagged_pair(const DeviceView* view, const char* heap, uint64_t off, uint32_t tag,
                                                uint32_t* d0, uint32_t* d1) {
  uint64_t lo, hi;
  load_slot_relaxed_sys(reinterpret_cast<const uint64_t*>(heap + off), lo, hi);
  int st = OK;
  if (__builtin_expect(!both_tagged(lo, hi, tag), 0)) {
    const TagWait w = tag_wait(view, off, true, tag, false);
    st = w.st, lo = w.lo, hi = w.hi;
  }
  *d0 = (uint32_t)lo;
  *d1 = (uint32_t)hi;
  return st;
}

__device__ __forceinline__ int take_tagged_word(const DeviceView* view, const char* heap, uint64_t off, uint32_t tag,
                                                uint32_t* d) {
  uint64_t v = load_relaxed_sys(reinterpret_cast<const uint64_t*>(heap + off));
  int st = OK;
  if (__builtin_expect(tag_of(v) != tag, 0)) {
    const TagWait w = tag_wait(view, off, false, tag, false);
    st = w.st, v = w.lo;
  }
  *d = (uint32_t)v;
  return st;
}

}  // namespace moe
}  // namespace gda4j

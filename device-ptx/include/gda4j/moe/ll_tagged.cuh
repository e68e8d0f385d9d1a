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
//                            rank, a bad entry); then a padding word to even (0): the header goes as tagged pairs
//     tag_header_words ..    the payload, in 512-channel chunks of 32 x Q pairs (Q = 2 for FP8, 4 for BF16): pair
//                            c x 32Q + q x 32 + l holds bytes [D l + 8q, D l + 8q + 8) of chunk c (D = 8Q: the bytes
//                            lane l of a warp casts), so each store instruction of a warp writes 512 contiguous bytes
//     tag_scale_word ..      FP8 only: the scale of each 128-channel block, a word each
// The count vector comes from each source every call, zero or not, so a receiver knows how many rows to wait for; the
// rows are gathered: one per (token, rank), whatever the token's experts there, and the receiver copies each into
// every expert slot its header names, with the source record (s, t, k, send row) beside it. A source's row to itself
// is the exception: its payload and scales go straight into its experts' slots, plain, as the counted protocol stores
// them (nothing in the call reads them: the kernel's end publishes them to the next one on the stream), and only its
// header is tagged, for the receive half to write the source records from.
// The receive half takes a row in segments, a warp each (TAG_SEGMENT_PAIRS pairs a lane: 4 FP8 chunks, or 2 BF16),
// loading the header, the segment's pairs and its scales at once (tag_load, tag_poll).
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

// A slot of tagged words a lane loads: a 16-byte pair (both words checked) or one word (held in both halves).
struct TagSlot {
  uint64_t off;  // heap offset at this rank
  bool pair;
};

// Loads the slots of `want` (bit j: slot at(j)) into lo[j], hi[j], every load issued before any value is used, so
// they are in flight together (one round trip for all). Compile-time indices: the values stay in registers.
template <int N, typename At>
__device__ __forceinline__ void tag_load(const char* heap, uint32_t want, uint64_t (&lo)[N], uint64_t (&hi)[N], At at) {
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if ((want >> j) & 1) {
      const TagSlot s = at(j);
      const uint64_t* w = reinterpret_cast<const uint64_t*>(heap + s.off);
      if (s.pair) {
        load_slot_relaxed_sys(w, lo[j], hi[j]);
      } else {
        lo[j] = hi[j] = load_relaxed_sys(w);
      }
    }
  }
}

// The slots of `want` whose words do not all carry `tag`.
template <int N>
__device__ __forceinline__ uint32_t tag_missing(uint32_t want, uint32_t tag, const uint64_t (&lo)[N],
                                                const uint64_t (&hi)[N]) {
  uint32_t missing = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) missing |= (uint32_t)(((want >> j) & 1) && !both_tagged(lo[j], hi[j], tag)) << j;
  return missing;
}

// A lane's wait for the slots of `want` it loaded (tag_load): while some word carries another tag, every slot still
// missing is loaded again at once, so once the data lands the lane has it one round trip later (a wait per slot
// in turn took a round trip per slot). Inline, so the caller's loaded registers stay live without a spill; the
// deadline of every wait (core/deadline.cuh) is looked at out of line once per POLLS_PER_LOOK rounds. On a timeout
// it records the first word still missing (ERROR_WAIT_TIMEOUT, expected = tag, seen = the tag it carries) and the
// host names the peer from the offset (LowLatencySizing.wordAt). Returns OK, or the look's status.
template <int N, typename At>
__device__ __forceinline__ int tag_poll(const DeviceView* view, const char* heap, uint32_t want, uint32_t tag,
                                        uint64_t (&lo)[N], uint64_t (&hi)[N], At at) {
  uint32_t missing = tag_missing(want, tag, lo, hi);
  if (__builtin_expect(missing == 0, 1)) return OK;
  Deadline d;
  for (uint32_t round = 1;; ++round) {
    if (round % POLLS_PER_LOOK == 0) {
      const Local me = local_of(view);
      const int st = look(me.abort_flag, me.timeout_ns, &d);
      if (st == ERR_TIMEOUT) {
        const int j = __ffs(missing) - 1;
        uint64_t first_lo = 0, first_hi = 0;
#pragma unroll
        for (int i = 0; i < N; ++i) {
          if (i == j) first_lo = lo[i], first_hi = hi[i];
        }
        const bool lo_missing = tag_of(first_lo) != tag;
        record_error(view, ERROR_WAIT_TIMEOUT, OP_WAIT_UNTIL, me.rank, at(j).off + (lo_missing ? 0 : 8), tag,
                     tag_of(lo_missing ? first_lo : first_hi), CMP_EQ, d.elapsed);
      }
      if (st != OK) return st;
    }
    tag_load(heap, missing, lo, hi, at);
    missing = tag_missing(missing, tag, lo, hi);
    if (missing == 0) return OK;
  }
}

}  // namespace moe
}  // namespace gda4j

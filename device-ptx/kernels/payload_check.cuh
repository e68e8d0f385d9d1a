// The payload check of the benchmark kernels (gda4j latency and bandwidth --check, io.gda4j.samples.PayloadCheck):
// the sender fills its source with a pattern of its own for each round, the receiver compares what arrived with the
// pattern it expects. A pattern per round and sender means a stale buffer (a round that did not arrive), a copy from
// the wrong offset or from the other rank all differ. Plain C++ apart from __device__ / __forceinline__, so the host
// test (samples/src/test/c/payload_check.cpp, PayloadCheckHostTest) builds it with g++.
//
// The record a rank's check counts into (io.gda4j.samples.PayloadCheckDescriptor), 8-byte aligned, in the rank's
// scratch at PAYLOAD_RECORD_OFFSET:
//
//    0               8               16              24
//    +---------------+---------------+---------------+
//    | mismatches    | first         | rounds        |
//    +---------------+---------------+---------------+
//   mismatches: 8-byte words (a partial last word counts as one) that differed, over every round checked
//   first:      (round << FIRST_ROUND_SHIFT) | byte offset of the earliest mismatch; all ones when none
//   rounds:     rounds (or repetitions) compared
#pragma once
#include <stdint.h>

namespace gda4j_bench {

constexpr uint64_t PAYLOAD_RECORD_OFFSET = 64;  // in Rank.scratch(): word 0 is the kernels' status
constexpr uint64_t PAYLOAD_RECORD_MISMATCHES = 0;
constexpr uint64_t PAYLOAD_RECORD_FIRST = 8;
constexpr uint64_t PAYLOAD_RECORD_ROUNDS = 16;
constexpr uint64_t PAYLOAD_RECORD_SIZE = 24;
constexpr uint32_t FIRST_ROUND_SHIFT = 36;  // offsets below 64 GiB; rounds below 2^28
constexpr uint64_t NO_MISMATCH = ~0ull;
constexpr uint64_t ROLE_INITIATOR = 0;  // who sent a round's payload: its seed's low bit
constexpr uint64_t ROLE_RESPONDER = 1;

// The seed of round `round` sent by `role` in run `salt` (the host counts runs, so two runs of one size differ).
__device__ __forceinline__ uint64_t payload_seed(uint64_t salt, uint64_t round, uint64_t role) {
  return (salt << 40) ^ (round << 1) ^ role;
}

// Word `index` of the payload with `seed`: splitmix64's finaliser of (seed, index), so neighbouring words, rounds and
// senders share no bytes. Byte i of a payload is byte i % 8 (little-endian) of word i / 8.
__device__ __forceinline__ uint64_t payload_word(uint64_t seed, uint64_t index) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ __forceinline__ uint8_t payload_byte(uint64_t seed, uint64_t i) {
  return (uint8_t)(payload_word(seed, i >> 3) >> (8 * (i & 7)));
}

// Thread `t` of `n` writes its share of the payload into [p, p + bytes); p is 8-byte aligned.
__device__ __forceinline__ void payload_fill(uint8_t* p, uint64_t bytes, uint64_t seed, uint64_t t, uint64_t n) {
  const uint64_t words = bytes >> 3;
  uint64_t* w = reinterpret_cast<uint64_t*>(p);
  for (uint64_t i = t; i < words; i += n) w[i] = payload_word(seed, i);
  for (uint64_t i = (words << 3) + t; i < bytes; i += n) p[i] = payload_byte(seed, i);
}

// Thread `t` of `n` compares its share of [p, p + bytes) with the payload of `seed`: returns how many of its 8-byte
// words differ (the partial last word counts as one, checked by thread 0) and lowers *first_offset to the byte offset
// of its earliest such word.
__device__ __forceinline__ uint64_t payload_verify(const uint8_t* p, uint64_t bytes, uint64_t seed, uint64_t t,
                                                   uint64_t n, uint64_t* first_offset) {
  const uint64_t words = bytes >> 3;
  const uint64_t* w = reinterpret_cast<const uint64_t*>(p);
  uint64_t bad = 0;
  for (uint64_t i = t; i < words; i += n) {
    if (w[i] != payload_word(seed, i)) {
      if (bad++ == 0 && (i << 3) < *first_offset) *first_offset = i << 3;
    }
  }
  if (t == 0 && (words << 3) < bytes) {
    for (uint64_t i = words << 3; i < bytes; ++i) {
      if (p[i] != payload_byte(seed, i)) {
        if (i < *first_offset) *first_offset = i;
        ++bad;
        break;
      }
    }
  }
  return bad;
}

// The record's `first` key of byte `offset` of round `round`: the smaller key is the earlier mismatch.
__device__ __forceinline__ uint64_t first_key(uint64_t round, uint64_t offset) {
  return (round << FIRST_ROUND_SHIFT) | offset;
}

}  // namespace gda4j_bench

// Runs device-ptx/kernels/payload_check.cuh (the benchmark kernels' payload check) on the host and prints
// "name value" lines for PayloadCheckHostTest: the record's layout, a seed, and what fill and verify did over many
// sizes and lane counts: an intact copy passes, and a corrupted byte, a stale round, the other sender's payload and
// a shifted copy are all caught (where they are), whatever the lanes.
#define __device__
#define __forceinline__ inline
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include "../../../../device-ptx/kernels/payload_check.cuh"

using namespace gda4j_bench;
#define P(name, value) std::printf("%s %lld\n", name, (long long)(value))

namespace {
long long cases = 0, failures = 0, first_failure_size = -1, first_failure_kind = -1;

void fail(uint64_t size, int kind) {
  if (failures++ == 0) first_failure_size = (long long)size, first_failure_kind = kind;
}

// The lanes of one kernel, one after the other: each handles only its own share.
void fill(uint8_t* p, uint64_t bytes, uint64_t seed, uint64_t lanes) {
  for (uint64_t t = 0; t < lanes; ++t) payload_fill(p, bytes, seed, t, lanes);
}

uint64_t verify(const uint8_t* p, uint64_t bytes, uint64_t seed, uint64_t lanes, uint64_t* first) {
  uint64_t bad = 0;
  *first = NO_MISMATCH;
  for (uint64_t t = 0; t < lanes; ++t) {
    uint64_t off = NO_MISMATCH;
    bad += payload_verify(p, bytes, seed, t, lanes, &off);
    if (off < *first) *first = off;
  }
  return bad;
}

void check(uint64_t size, uint64_t lanes) {
  std::vector<uint64_t> a((size + 7) / 8 + 2), b((size + 7) / 8 + 2);
  uint8_t* sent = reinterpret_cast<uint8_t*>(a.data());
  uint8_t* got = reinterpret_cast<uint8_t*>(b.data());
  const uint64_t seed = payload_seed(7, 1000, ROLE_INITIATOR);
  fill(sent, size, seed, lanes);
  // The fill writes exactly the bytes asked for, the pattern's bytes.
  for (uint64_t i = 0; i < size; ++i) {
    if (sent[i] != payload_byte(seed, i)) return fail(size, 0);
  }
  if (sent[size] != 0) return fail(size, 1);
  std::memcpy(got, sent, size);
  uint64_t first;
  ++cases;
  if (verify(got, size, seed, lanes, &first) != 0 || first != NO_MISMATCH) return fail(size, 2);
  if (size == 0) return;
  // One byte flipped anywhere is caught at its word (or the tail byte itself).
  for (uint64_t at : {uint64_t(0), size / 2, size - 1}) {
    got[at] ^= 0x40;
    const uint64_t want = at < (size & ~7ull) ? at & ~7ull : at;
    ++cases;
    if (verify(got, size, seed, lanes, &first) != 1 || first != want) fail(size, 3);
    got[at] ^= 0x40;
  }
  if (size < 8) return;  // a payload of under 8 bytes can equal another round's by chance (1 in 2^(8 x size))
  // A stale round, the other sender's payload of the same round, another run's: all differ in every word.
  const uint64_t others[] = {payload_seed(7, 999, ROLE_INITIATOR), payload_seed(7, 1000, ROLE_RESPONDER),
                             payload_seed(8, 1000, ROLE_INITIATOR)};
  for (uint64_t other : others) {
    ++cases;
    if (verify(got, size, other, lanes, &first) != (size + 7) / 8 || first != 0) fail(size, 4);
  }
  // A copy shifted by one word: misplaced data is caught.
  if (size >= 16) {
    std::memmove(got + 8, sent, size - 8);
    ++cases;
    if (verify(got, size, seed, lanes, &first) == 0 || first != 8) fail(size, 5);
  }
}
}  // namespace

int main() {
  P("RECORD_OFFSET", PAYLOAD_RECORD_OFFSET);
  P("MISMATCHES_OFFSET", PAYLOAD_RECORD_MISMATCHES);
  P("FIRST_OFFSET", PAYLOAD_RECORD_FIRST);
  P("ROUNDS_OFFSET", PAYLOAD_RECORD_ROUNDS);
  P("SIZE", PAYLOAD_RECORD_SIZE);
  P("FIRST_ROUND_SHIFT", FIRST_ROUND_SHIFT);
  P("NO_MISMATCH", NO_MISMATCH);
  P("ROLE_INITIATOR", ROLE_INITIATOR);
  P("ROLE_RESPONDER", ROLE_RESPONDER);
  P("seed_3_5_1", payload_seed(3, 5, ROLE_RESPONDER));
  P("first_key_17_4096", first_key(17, 4096));
  for (uint64_t lanes : {1, 3, 32, 256}) {
    for (uint64_t size = 0; size <= 80; ++size) check(size, lanes);
    for (uint64_t size : {127, 128, 1000, 4099, 65536}) check(size, lanes);
  }
  P("cases", cases);
  P("failures", failures);
  P("first_failure_size", first_failure_size);
  P("first_failure_kind", first_failure_kind);
  return 0;
}

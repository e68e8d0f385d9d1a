// Runs gda4j/core/copy.cuh (the copy every direct put makes) on the host over every small size at every pair of
// offsets mod 32, by 1, 2, 32 and 96 lanes, and checks that exactly the bytes asked for land and nothing around them
// changes. Prints "name value" lines for DirectCopyHostTest: the cases run, the failures, and the first failure.
// The copy is plain C++ apart from its qualifiers and CUDA's int4, which the lines below stand in for, so g++ builds
// it on machines without nvcc or a GPU. Lanes run one after another: each writes only its own share of the bytes.
#define __device__
#define __forceinline__ inline
struct alignas(16) int4 {
  int x, y, z, w;
};
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include "gda4j/core/copy.cuh"

namespace {
constexpr int SLACK = 64;    // poisoned bytes checked on each side of the destination
constexpr unsigned char POISON = 0xA5;
alignas(64) unsigned char src_buf[8192 + 64];
alignas(64) unsigned char dst_buf[8192 + 64 + 2 * SLACK];

long long cases = 0, failures = 0;
long long first_size = -1, first_src = -1, first_dst = -1, first_lanes = -1, first_byte = -1;

void check(uint64_t size, int src_off, int dst_off, uint32_t lanes) {
  for (uint64_t i = 0; i < size + 64; ++i) src_buf[i] = (unsigned char)(i * 7 + 1 + size);
  std::memset(dst_buf, POISON, sizeof dst_buf);
  unsigned char* dst = dst_buf + SLACK + dst_off;
  const unsigned char* src = src_buf + src_off;
  for (uint32_t lane = 0; lane < lanes; ++lane) gda4j::copy_cooperative(dst, src, size, lane, lanes);
  ++cases;
  for (long long i = -SLACK - dst_off; i < (long long)size + SLACK; ++i) {
    const unsigned char want = i >= 0 && i < (long long)size ? src[i] : POISON;
    if (dst[i] != want) {
      if (failures++ == 0) {
        first_size = (long long)size, first_src = src_off, first_dst = dst_off, first_lanes = lanes, first_byte = i;
      }
      return;
    }
  }
}
}  // namespace

int main() {
  const uint32_t lane_counts[] = {1, 2, 32, 96};
  for (uint32_t lanes : lane_counts) {
    for (uint64_t size = 0; size <= 80; ++size) {
      for (int s = 0; s < 32; ++s) {
        for (int d = 0; d < 32; ++d) check(size, s, d, lanes);
      }
    }
    // Longer copies: the unrolled vector loop and its remainder, at a few offsets.
    const uint64_t longer[] = {127, 128, 129, 255, 1000, 4099, 8192};
    for (uint64_t size : longer) {
      for (int s : {0, 3, 8, 16}) {
        for (int d : {0, 3, 8, 16, 21}) check(size, s, d, lanes);
      }
    }
  }
  std::printf("cases %lld\nfailures %lld\nfirst_size %lld\nfirst_src_offset %lld\nfirst_dst_offset %lld\n"
              "first_lanes %lld\nfirst_byte %lld\n",
              cases, failures, first_size, first_src, first_dst, first_lanes, first_byte);
  return 0;
}

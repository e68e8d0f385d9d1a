// Runs gda4j/moe/fp8_block.cuh's cast (the kernel's own functions, built for the host) for
// io.gda4j.moe.tensor.Fp8BlockNvccGoldenTest: reads blocks of 128 BF16 values (hex, one block a line, preceded by 0 or 1 for
// power-of-two scales) and prints each block's scale bits and its 128 codes in hex.
#include <gda4j/moe/fp8_block.cuh>
#include <cstdio>

using namespace gda4j::moe;

int main() {
  int pow2;
  while (std::scanf("%d", &pow2) == 1) {
    uint16_t x[LL_SCALE_BLOCK];
    for (int i = 0; i < LL_SCALE_BLOCK; ++i) {
      unsigned v;
      if (std::scanf("%x", &v) != 1) return 2;
      x[i] = (uint16_t)v;
    }
    const float scale = ll_block_scale(ll_block_amax(x), pow2 != 0);
    std::printf("%08x", ll_float_bits(scale));
    for (int i = 0; i < LL_SCALE_BLOCK; ++i) std::printf(" %02x", (unsigned)ll_quantize(x[i], scale));
    std::printf("\n");
  }
  return 0;
}

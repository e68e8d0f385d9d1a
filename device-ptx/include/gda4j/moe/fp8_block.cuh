// gda4j/moe/fp8_block.cuh: the low-latency dispatch's cast of BF16 to FP8 e4m3 with one FP32 scale per 128 channels.
// The contract, stated once here and once in io.gda4j.moe.tensor.Fp8BlockQuantizer (the two must say the same; the Java
// side is the reference the GPU tests compare with, and Fp8BlockNvccGoldenTest runs these very functions, built for
// the host, against it). For each block of 128 channels of a row:
//   1. amax = the largest |x| of the block, each BF16 value widened exactly to FP32, from +0, NaN ignored (fmaxf;
//      any order: a maximum is exact);
//   2. amax = fmaxf(amax, LL_AMAX_FLOOR)   (1e-4f: an all-zero block still gets a finite, nonzero scale);
//   3. scale = amax / 448, IEEE round to nearest (__fdiv_rn);
//   4. power-of-two (UE8M0) scales: a nonzero mantissa is cleared and the exponent raised by one (bit arithmetic);
//   5. q = __nv_cvt_float_to_fp8(x / scale, __NV_SATFINITE, __NV_E4M3), the division IEEE round to nearest.
// Host-and-device functions, so the same source is checked on the host (no GPU needed).
#pragma once
#include <stdint.h>
#include <string.h>
#include <cuda_fp8.h>

namespace gda4j {
namespace moe {

constexpr float LL_AMAX_FLOOR = 1e-4f;
constexpr float LL_FP8_MAX = 448.0f;
constexpr int LL_SCALE_BLOCK = 128;

__host__ __device__ __forceinline__ float ll_div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;  // IEEE binary32 division (SSE on x86-64): round to nearest even, like __fdiv_rn
#endif
}

__host__ __device__ __forceinline__ float ll_bits_float(uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float f;
  memcpy(&f, &b, 4);
  return f;
#endif
}

__host__ __device__ __forceinline__ uint32_t ll_float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
#endif
}

__host__ __device__ __forceinline__ float ll_bf16_to_float(uint16_t b) { return ll_bits_float((uint32_t)b << 16); }

// Steps 2 to 4 from a block's amax (step 1).
__host__ __device__ __forceinline__ float ll_block_scale(float amax, bool power_of_two) {
  const float scale = ll_div_rn(fmaxf(amax, LL_AMAX_FLOOR), LL_FP8_MAX);
  if (!power_of_two) return scale;
  const uint32_t bits = ll_float_bits(scale);
  if ((bits & 0x7fffffu) == 0 || (bits & 0x7f800000u) == 0x7f800000u) return scale;
  return ll_bits_float((bits & 0xff800000u) + 0x00800000u);
}

// Step 5: one element. A zero (+0 or -0) gives the zero of its sign without the division: the same bits (0x00 or
// 0x80), but on the GPU __fdiv_rn takes its slow path for a zero numerator, and with the test data's all-zero
// blocks that path was a tenth of the dispatch send's time.
__host__ __device__ __forceinline__ uint8_t ll_quantize(uint16_t x, float scale) {
  if ((x & 0x7fffu) == 0) return (uint8_t)((x >> 8) & 0x80u);
  return (uint8_t)__nv_cvt_float_to_fp8(ll_div_rn(ll_bf16_to_float(x), scale), __NV_SATFINITE, __NV_E4M3);
}

// Step 1 over a whole block (the host check's form; the kernel reduces across a warp instead).
__host__ __device__ __forceinline__ float ll_block_amax(const uint16_t* x) {
  float amax = 0.0f;
  for (int i = 0; i < LL_SCALE_BLOCK; ++i) amax = fmaxf(amax, fabsf(ll_bf16_to_float(x[i])));
  return amax;
}

}  // namespace moe
}  // namespace gda4j

// Golden values of CUDA's FP8 e4m3 conversion for io.gda4j.moe.tensor.Fp8E4m3NvccGoldenTest: reads one FP32 bit pattern a
// line (hex) on stdin and prints the code __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) gives it (hex), the
// conversion the low-latency dispatch kernel uses. Built for the host (the function is __host__ __device__), so it
// needs nvcc and no GPU:  nvcc -o fp8_golden fp8_golden.cu && echo 3f800000 | ./fp8_golden   -> 38
#include <cuda_fp8.h>
#include <cstdio>
#include <cstring>

int main() {
  unsigned bits;
  while (std::scanf("%x", &bits) == 1) {
    float x;
    std::memcpy(&x, &bits, sizeof x);
    const __nv_fp8_storage_t code = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    std::printf("%02x\n", (unsigned)code);
  }
  return 0;
}

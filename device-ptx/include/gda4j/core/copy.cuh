// Cooperative memory copy used by every put: `lane` of `nlanes` threads each move a strided share.
// Picks the widest access both pointers allow (16, 8, 4 or 1 bytes), peels an unaligned head, and keeps
// several 16-byte loads in flight per thread so that one block can saturate NVLink.
#pragma once
#include <stdint.h>

namespace gda4j {

template <typename T, int UNROLL>
__device__ __forceinline__ void copy_vectors(T* __restrict__ dst, const T* __restrict__ src, uint64_t count,
                                             uint32_t lane, uint32_t nlanes) {
  uint64_t i = lane;
  const uint64_t step = (uint64_t)nlanes * UNROLL;
  for (; i + (uint64_t)(UNROLL - 1) * nlanes < count; i += step) {
    T r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) r[u] = src[i + (uint64_t)u * nlanes];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) dst[i + (uint64_t)u * nlanes] = r[u];
  }
  for (; i < count; i += nlanes) dst[i] = src[i];
}

__device__ __forceinline__ void copy_bytes(char* dst, const char* src, uint64_t bytes, uint32_t lane,
                                           uint32_t nlanes) {
  for (uint64_t i = lane; i < bytes; i += nlanes) dst[i] = src[i];
}

// One piece of the tail below, as one access of type P.
template <typename P>
__device__ __forceinline__ void copy_piece(char* dst, const char* src, uint64_t* off) {
  *reinterpret_cast<P*>(dst + *off) = *reinterpret_cast<const P*>(src + *off);
  *off += sizeof(P);
}

// What a thread copying alone has left after the vectors of type T: fewer than sizeof(T) bytes, starting T-aligned,
// so pieces of 8, 4, 2 and 1 bytes in that order are each aligned to their width. Byte by byte, an 8-byte put_signal
// between 16-byte-aligned offsets was eight one-byte loads and stores across NVLink in turn: 5.67 us a round trip on
// 2x H100, against 5.19-5.44 in pieces.
template <typename T>
__device__ __forceinline__ void copy_tail(char* dst, const char* src, uint64_t bytes) {
  uint64_t off = 0;
  if (sizeof(T) > 8 && bytes - off >= 8) copy_piece<uint64_t>(dst, src, &off);
  if (sizeof(T) > 4 && bytes - off >= 4) copy_piece<uint32_t>(dst, src, &off);
  if (sizeof(T) > 2 && bytes - off >= 2) copy_piece<uint16_t>(dst, src, &off);
  if (bytes - off >= 1) copy_piece<char>(dst, src, &off);
}

template <typename T, int UNROLL>
__device__ __forceinline__ void copy_aligned_as(char* dst, const char* src, uint64_t bytes, uint32_t lane,
                                                uint32_t nlanes) {
  constexpr uint64_t W = sizeof(T);
  uint64_t head = (W - ((uintptr_t)dst & (W - 1))) & (W - 1);
  if (head > bytes) head = bytes;
  copy_bytes(dst, src, head, lane, nlanes);
  dst += head;
  src += head;
  bytes -= head;
  uint64_t count = bytes / W;
  copy_vectors<T, UNROLL>(reinterpret_cast<T*>(dst), reinterpret_cast<const T*>(src), count, lane, nlanes);
  // Several lanes take a byte of the tail each, side by side.
  if (nlanes == 1) {
    if (bytes != count * W) copy_tail<T>(dst + count * W, src + count * W, bytes - count * W);
  } else {
    copy_bytes(dst + count * W, src + count * W, bytes - count * W, lane, nlanes);
  }
}

// Copies [src, src+bytes) to dst. All `nlanes` callers must pass the same arguments.
__device__ __forceinline__ void copy_cooperative(void* dst, const void* src, uint64_t bytes, uint32_t lane,
                                                 uint32_t nlanes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  uintptr_t misalign = ((uintptr_t)d ^ (uintptr_t)s);
  if ((misalign & 15) == 0) {
    copy_aligned_as<int4, 4>(d, s, bytes, lane, nlanes);
  } else if ((misalign & 7) == 0) {
    copy_aligned_as<uint64_t, 4>(d, s, bytes, lane, nlanes);
  } else if ((misalign & 3) == 0) {
    copy_aligned_as<uint32_t, 4>(d, s, bytes, lane, nlanes);
  } else {
    copy_bytes(d, s, bytes, lane, nlanes);
  }
}

}  // namespace gda4j

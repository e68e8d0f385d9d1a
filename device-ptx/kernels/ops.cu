// Host-launched device API calls (io.gda4j.world.DeviceOps): one launch runs one call of the device API on
// one rank. Used by tests and by host code that wants a single put or signal without writing a kernel.
// Each call that moves data ends with quiet, so the operation is complete when the kernel is: for direct peers
// that is a fence, for IBGDA peers it waits for the CQEs.
// Scope codes: 0 = thread, 1 = warp, 2 = block (io.gda4j.world.Scope). Launch one block (1, 32 or N threads).
#include <gda4j/gda4j.cuh>

using namespace gda4j;

// put (with_signal == 0) or put_signal (with_signal != 0) in the given scope.
extern "C" __global__ void gda4j_op_put(const DeviceView* v, int peer, uint64_t dst_offset, uint64_t src_offset,
                                        uint64_t bytes, uint32_t scope, int with_signal, uint64_t sig_offset,
                                        uint32_t sig_op, uint64_t sig_value, int* status_out) {
  int st = OK;
  if (scope == 0) {
    if (threadIdx.x == 0) {
      st = with_signal ? put_signal(v, peer, dst_offset, src_offset, bytes, sig_offset, sig_op, sig_value)
                       : put(v, peer, dst_offset, src_offset, bytes);
      if (st == OK) st = quiet(v);
      *status_out = st;
    }
  } else if (scope == 1) {
    if (threadIdx.x < 32) {
      st = with_signal ? put_signal_warp(v, peer, dst_offset, src_offset, bytes, sig_offset, sig_op, sig_value)
                       : put_warp(v, peer, dst_offset, src_offset, bytes);
      if (threadIdx.x == 0) {
        if (st == OK) st = quiet(v);
        *status_out = st;
      }
    }
  } else {
    st = with_signal ? put_signal_block(v, peer, dst_offset, src_offset, bytes, sig_offset, sig_op, sig_value)
                     : put_block(v, peer, dst_offset, src_offset, bytes);
    if (threadIdx.x == 0) {
      if (st == OK) st = quiet(v);
      *status_out = st;
    }
  }
}

// Every thread of the grid adds `value` to the peer's word `per_thread` times: the sum is exact or broken.
extern "C" __global__ void gda4j_op_signal_add(const DeviceView* v, int peer, uint64_t sig_offset,
                                               uint64_t value, uint32_t per_thread, int* status_out) {
  int st = OK;
  for (uint32_t i = 0; i < per_thread && st == OK; ++i) st = signal(v, peer, sig_offset, SIGNAL_ADD, value);
  __syncthreads();
  if (threadIdx.x == 0 && st == OK) st = quiet(v);
  if (st != OK) atomicMin(status_out, st);
}

// signal (set or add) from one thread.
extern "C" __global__ void gda4j_op_signal(const DeviceView* v, int peer, uint64_t sig_offset, uint32_t op,
                                           uint64_t value, int* status_out) {
  int st = signal(v, peer, sig_offset, op, value);
  if (st == OK) st = quiet(v);
  *status_out = st;
}

// wait_until from one thread; seen_out gets the last value read.
extern "C" __global__ void gda4j_op_wait_until(const DeviceView* v, uint64_t sig_offset, uint32_t cmp,
                                               uint64_t value, uint64_t* seen_out, int* status_out) {
  uint64_t seen = 0;
  *status_out = wait_until(v, sig_offset, cmp, value, &seen);
  *seen_out = seen;
}

// put_inline of an 8-byte value from one thread.
extern "C" __global__ void gda4j_op_put_inline(const DeviceView* v, int peer, uint64_t slot_offset, uint64_t value,
                                               uint32_t seq, int* status_out) {
  int st = put_inline(v, peer, slot_offset, value, seq);
  if (st == OK) st = quiet(v);
  *status_out = st;
}

// wait_inline from one thread; value_out gets the 8-byte payload.
extern "C" __global__ void gda4j_op_wait_inline(const DeviceView* v, uint64_t slot_offset, uint32_t seq,
                                                uint64_t* value_out, int* status_out) {
  uint64_t value = 0;
  *status_out = wait_inline(v, slot_offset, seq, &value);
  *value_out = value;
}

// fence then signal from one thread: the release pattern for a bare signal.
extern "C" __global__ void gda4j_op_fence_signal(const DeviceView* v, int peer, uint64_t sig_offset, uint32_t op,
                                                 uint64_t value, int* status_out) {
  int st = fence(v, peer);
  if (st == OK) st = signal(v, peer, sig_offset, op, value);
  if (st == OK) st = quiet(v);
  *status_out = st;
}

// quiet from one thread.
extern "C" __global__ void gda4j_op_quiet(const DeviceView* v, int* status_out) { *status_out = quiet(v); }

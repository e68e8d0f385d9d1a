// A stand-in for the libcuda entry points cuda.LibCuda binds, for HostFunctionsFakeDriverTest (no GPU): a host
// function "queued" on stream 1 runs at once, once, on a thread of the driver's (a new pthread), as when the stream
// reaches it; one queued on stream 2 is only recorded, as a capture records a host node, and fake_replay() runs the
// recorded one again on a new thread, as a graph replay does.
#include <pthread.h>
#include <stddef.h>

typedef void (*host_fn)(void *);

int cuMemGetHandleForAddressRange(void *handle, unsigned long long dptr, size_t size, int type,
                                  unsigned long long flags) {
  (void)handle; (void)dptr; (void)size; (void)type; (void)flags;
  return 801;  // CUDA_ERROR_NOT_SUPPORTED
}

int cuStreamBatchMemOp_v2(void *stream, unsigned int count, void *ops, unsigned int flags) {
  (void)stream; (void)count; (void)ops; (void)flags;
  return 801;
}

static host_fn recorded_fn;
static void *recorded_data;

static void *call(void *unused) {
  (void)unused;
  recorded_fn(recorded_data);
  return NULL;
}

static int run_on_a_driver_thread(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, call, NULL) != 0) return 999;
  return pthread_join(t, NULL) == 0 ? 0 : 999;
}

int cuLaunchHostFunc(void *stream, host_fn fn, void *data) {
  recorded_fn = fn;
  recorded_data = data;
  return (size_t)stream == 1 ? run_on_a_driver_thread() : 0;
}

int fake_replay(void) {
  return recorded_fn == NULL ? 999 : run_on_a_driver_thread();
}

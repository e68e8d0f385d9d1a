// The benchmark kernels of bench.cu with the device API's IBGDA branch compiled in (module bench_ibgda): the samples
// load this module for peers reached over IBGDA, and bench.cu's for the others, so the P2P kernels carry no IBGDA code.
#define GDA4J_IBGDA_ENABLED 1
#include "bench.cu"

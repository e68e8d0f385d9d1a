// gda4j/transport/backends.cuh: the folders of the transports that have device code of their own, one include each;
// with gda4j/transports.def it is the device side's table. Each folder's header defines `gda4j::<name>::backend`
// (core/backend.cuh), which the dispatcher (detail/dispatch.cuh) calls in the order of the table's rows. nvcc lays
// out a module's PTX functions in the order they are defined, so this order is also the PTX's.
#pragma once
#include "p2p/p2p.cuh"
#include "proxy/proxy.cuh"
#include "ibgda/ibgda.cuh"

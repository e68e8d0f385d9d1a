// Stand-in for CUDA's <vector_types.h> in host builds without the CUDA toolkit (ibgda_qp_host.cpp): the one vector
// type gda4j/layout/mlx5.cuh uses, with CUDA's size and alignment.
#pragma once
struct alignas(16) uint4 {
  unsigned int x, y, z, w;
};

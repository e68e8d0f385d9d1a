// The lines both MoE parameter-block printers (moe_params.cpp, ll_params.cpp) print for the 32-byte header their
// block begins with (gda4j/moe/params_header.cuh): its fields where `BLOCK` holds them, as "head.<NAME> <offset>";
// MoeParamsHeaderLayout checks them against io.gda4j.moe.core.MoeParamsHeaderDescriptor. Include after P is defined.
#pragma once
#define GDA4J_PRINT_PARAMS_HEAD(BLOCK)                                                                             \
  do {                                                                                                             \
    const long long head = (long long)offsetof(BLOCK, head);                                                       \
    P("head.MAGIC_OFFSET", head + offsetof(MoeParamsHeader, magic));                                              \
    P("head.NRANKS_OFFSET", head + offsetof(MoeParamsHeader, nranks));                                            \
    P("head.RANK_OFFSET", head + offsetof(MoeParamsHeader, rank));                                                \
    P("head.HIDDEN_OFFSET", head + offsetof(MoeParamsHeader, hidden));                                            \
    P("head.DTYPE_OFFSET", head + offsetof(MoeParamsHeader, dtype));                                              \
    P("head.TOP_K_OFFSET", head + offsetof(MoeParamsHeader, top_k));                                              \
    P("head.NUM_EXPERTS_OFFSET", head + offsetof(MoeParamsHeader, num_experts));                                  \
    P("head.NUM_LOCAL_EXPERTS_OFFSET", head + offsetof(MoeParamsHeader, num_local_experts));                      \
    P("head.LENGTH", sizeof(MoeParamsHeader));                                                                     \
  } while (0)

// Prints the layout of gda4j/transport/ibgda/device_qp.cuh's DeviceQp as "name value" lines; DeviceQpLayoutTest compares them
// with io.gda4j.ibgda.DeviceQpDescriptor. The header is plain C++ (the struct and its constants), so g++ builds it.
#include <cstddef>
#include <cstdio>
#include "gda4j/transport/ibgda/device_qp.cuh"

using namespace gda4j::ibgda;
#define P(name, value) std::printf("%s %lld\n", name, (long long)(value))
#define F(field, NAME) P(#NAME "_OFFSET", offsetof(DeviceQp, field))

int main() {
  F(sq_buf, SQ_BUF);
  F(dbrec, DBREC);
  F(doorbell, DOORBELL);
  F(cq_buf, CQ_BUF);
  F(cq_dbrec, CQ_DBREC);
  F(wqe_sizes, WQE_SIZES);
  F(sq_wqebbs, SQ_WQEBBS);
  F(cqe_count, CQE_COUNT);
  F(qpn, QPN);
  F(flags, FLAGS);
  F(local_base, LOCAL_BASE);
  F(remote_base, REMOTE_BASE);
  F(heap_size_bytes, HEAP_SIZE_BYTES);
  F(lkey, LKEY);
  F(rkey, RKEY);
  F(flush_qp, FLUSH_QP);
  F(flush_flag, FLUSH_FLAG);
  F(flush_rkey, FLUSH_RKEY);
  F(discard_lkey, DISCARD_LKEY);
  F(max_inline, MAX_INLINE);
  F(peer, PEER);
  F(resv_head, RESV_HEAD);
  F(ready_head, READY_HEAD);
  F(prod_idx, PROD_IDX);
  F(db_lock, DB_LOCK);
  F(fetch_end, FETCH_END);
  F(gets_posted, GETS_POSTED);
  F(gets_flushed, GETS_FLUSHED);
  F(discard_addr, DISCARD_ADDR);
  F(cons_head, CONS_HEAD);
  F(cq_ci, CQ_CI);
  F(poll_lock, POLL_LOCK);
  F(error, ERROR);
  F(qp_count, QP_COUNT);
  F(qp_index, QP_INDEX);
  P("LENGTH", sizeof(DeviceQp));
  P("FLAG_FLUSH_ON_QUIET", FLAG_FLUSH_ON_QUIET);
  P("FLAG_RELAXED_ORDERING", FLAG_RELAXED_ORDERING);
  P("ERROR_SET", ERROR_SET);
  P("ERROR_POSTING", ERROR_POSTING);
  P("CODE.CQE_ERROR", gda4j::ERROR_CQE);
  P("CODE.SQ_FULL", gda4j::ERROR_SQ_FULL);
  P("CODE.POST_TIMEOUT", gda4j::ERROR_POST_TIMEOUT);
  P("CODE.INLINE_TOO_LARGE", gda4j::ERROR_INLINE_TOO_LARGE);
  P("CODE.SET_SIGNAL_RELAXED", gda4j::ERROR_SET_SIGNAL_RELAXED);
  return 0;
}

// gda4j/moe/ring.cuh: the channel protocol of worlds with rings (kernels/moe_ring.cu): the sending half of a
// channel (a group of warps that writes only into slots the receiver granted; the receiver grants them back), and
// the counters both halves raise.
//
// Counters (u64, cumulative over calls, so no reset races with a peer that is already in the next call):
//   tail   at the receiver, per (channel, source): rows written into its ring; raised by the sender after the rows
//          (put_signal over proxy/ibgda: ordered after the chunk's data; fence + signal over p2p)
//   credit at the sender, per (channel, dest): rows the receiver has read; raised by the receiver after it read them
//   (each has one writer, which raises it with counter_op: a SET of the new total or an ADD of the difference)
//   sent / consumed in device memory: the same two counts as each side last left them
// A sender may write row i (cumulative) into slot i % ring once credit >= i + 1 - ring.
#pragma once
#include <stdint.h>
#include "ht.cuh"

namespace gda4j {
namespace moe {

__device__ __forceinline__ uint64_t* state_word(const MoeParams* p, int which, int c, int peer) {
  return reinterpret_cast<uint64_t*>(p->state) + ((uint64_t)which * p->num_channels + c) * p->head.nranks + peer;
}

// Lane 0 waits until this rank's counter at `sig` reaches `want`; every lane gets the status and the value seen.
// The wait time is added to wait_ns[peer] (readable from Java: which peer this rank waited for).
__device__ __forceinline__ int warp_wait_counter(const Local& me, const MoeParams* prm, uint64_t sig, uint64_t want,
                                                 int peer, uint64_t* seen) {
  int st = OK;
  uint64_t v = 0;
  if (lane_id() == 0) {
    const uint64_t* word = reinterpret_cast<const uint64_t*>(me.heap + sig);
    v = load_acquire_sys(word);
    if (v < want) {
      const uint64_t start = global_timer_ns();
      st = wait_until(me, sig, CMP_GE, want, &v);
      atomicAdd(reinterpret_cast<unsigned long long*>(prm->wait_ns) + peer,
                (unsigned long long)(global_timer_ns() - start));
    }
  }
  __syncwarp();
  *seen = __shfl_sync(0xffffffffu, v, 0);
  return __shfl_sync(0xffffffffu, st, 0);
}

// A group of `warps` warps of one block that serve one peer together meets at named barrier `bar` (1..15; barrier 0
// is __syncthreads). A group of one warp needs no barrier, so any number of ranks can have one.
__device__ __forceinline__ void group_sync(int bar, int warps) {
  if (warps == 1) {
    __syncwarp();
  } else {
    asm volatile("bar.sync %0, %1;" ::"r"(bar), "r"(warps * 32) : "memory");
  }
}

// How a counter with one writer is raised: a SET of the new total where that is safe (sets_land_in_order), else an
// ADD of the difference. Over the proxy a SET is a stream write where an ADD is a kernel launch: the proxy's BF16
// dispatch of 4096 tokens went from 6.8 to 4.4 ms (2x H100, one run).
__device__ __forceinline__ uint32_t counter_op(const Peer& p) {
  return sets_land_in_order(p) ? SIGNAL_SET : SIGNAL_ADD;
}

// The sending half of a channel to one peer, driven by a group of `warps` warps (this one is warp `w` of them). Rows
// go out in runs of at most chunk rows that never cross the ring's end (over proxy and ibgda a run is one put of a
// contiguous stretch of the staging copy), written in pieces. For each piece:
//   begin(rows): warp 0 announces the last run if this piece starts a new one, and waits   then the group meets
//                until it fits (credit >= pos + rows - ring), announcing what it holds first
//   slot(j):     every warp writes the piece's rows j with j % warps == w there
//   end(rows):   the group meets: the rows are written
// and finish() (warp 0) announces the last run. Warp 0's status reaches the others through `*status` at the next
// barrier, so the group leaves together: a warp that left alone would leave the others at a barrier for ever.
struct GroupSender {
  Peer peer;
  Local me;
  const MoeParams* prm;
  bool direct;
  uint64_t ring_at_peer;    // heap offset of our ring at the peer
  uint64_t stage;           // heap offset of the local staging copy of that ring
  uint64_t tail_sig;        // heap offset of the tail word at the peer
  uint64_t credit_sig;      // heap offset of the credit word here
  uint32_t row_bytes;
  uint32_t ring;
  uint32_t chunk;
  uint64_t pos;             // rows written (cumulative; the same in every warp)
  uint64_t run_start;       // where the current run began (the same in every warp): a run goes out in one put
  uint64_t announced;       // warp 0: rows the receiver was told of (cumulative)
  uint64_t credit;          // warp 0: the last credit seen
  int w, warps, bar;
  int* status;              // shared by the group: warp 0's last status

  // Pieces (what the group writes between two barriers) fill runs of up to `chunk` rows, which never wrap the ring,
  // and a run is announced once whole: the dispatch's pieces end with each 32-token window, so runs that span
  // windows are what let a chunk of more than 32 rows go out in one put (over the proxy each put is a trigger, which
  // costs its proxy thread a few microseconds of driver calls).
  // The run the next piece goes into: the current one, or a new one at pos once the current one is whole.
  __device__ __forceinline__ uint64_t next_run() const {
    return pos - run_start >= chunk || pos % ring == 0 ? pos : run_start;
  }

  // Rows the next piece holds, with `left` rows still to send.
  __device__ __forceinline__ uint32_t piece(uint32_t left) const {
    const uint32_t room = chunk - (uint32_t)(pos - next_run());
    return min(left, min(room, ring - (uint32_t)(pos % ring)));
  }

  // `prior`: a failure warp 0 met before (the group returns it from its first begin). Warp 0 announces the last run
  // when this piece starts a new one, and whatever it holds before it waits for credits: the receiver frees slots
  // only for rows it was told of.
  __device__ __forceinline__ int begin(uint32_t rows, int prior = OK) {
    const uint64_t run = next_run();
    if (w == 0) {
      int st = prior;
      if (st == OK && run == pos) st = flush();
      if (st == OK && pos + rows > credit + ring) {
        st = flush();
        if (st == OK) st = warp_wait_counter(me, prm, credit_sig, pos + rows - ring, peer.rank, &credit);
      }
      if (lane_id() == 0) *status = st;
    }
    run_start = run;
    group_sync(bar, warps);
    return *status;
  }

  __device__ __forceinline__ char* slot(uint32_t j) const {
    const uint64_t at = (uint64_t)((pos + j) % ring) * row_bytes;
    return direct ? peer.heap + ring_at_peer + at : me.heap + stage + at;
  }

  __device__ __forceinline__ void end(uint32_t rows) {
    // The staging rows are read by the copy engine or the NIC, not by this GPU: each warp makes its own stores
    // visible system-wide before warp 0 hands the run over. Over p2p warp 0's fence covers the group's stores (the
    // barrier orders them before it).
    if (!direct) __threadfence_system();
    group_sync(bar, warps);
    pos += rows;
  }

  // Warp 0: announces the last run.
  __device__ __forceinline__ int finish() { return w == 0 ? flush() : OK; }

  // Warp 0: announces the rows written since the last announcement (within one run: contiguous in the ring). Over
  // p2p they are already at the peer (a fence orders them before the tail); otherwise one put of them from the
  // staging copy, with the tail signalled after it.
  __device__ __forceinline__ int flush() {
    if (pos == announced) return OK;
    const uint64_t first = (announced % ring) * row_bytes;
    const uint64_t rows = pos - announced;
    int st = OK;
    if (direct) {
      if (lane_id() == 0) {
        st = fence(peer);
        if (st == OK) st = signal(peer, tail_sig, SIGNAL_SET, pos);
      }
      st = __shfl_sync(0xffffffffu, st, 0);
    } else {
      const uint32_t op = counter_op(peer);
      st = put_signal_warp(peer, ring_at_peer + first, stage + first, rows * row_bytes, tail_sig, op,
                           op == SIGNAL_SET ? pos : rows);
    }
    announced = pos;
    return st;
  }
};

// Rows a receiver consumes before it grants them back, the rest going back at the end of the call. Over the proxy
// each grant is a trigger (a driver call on the proxy thread), and a combine that granted after every round of
// combine_warps tokens sent about 20 of them per channel and peer in a 4096-token call. Never more than the sender
// can be short of without a deadlock: a sender waits for credits only with more than ring - chunk rows out (it
// announced them all first), of which the receiver may still be reading `in_hand` (a combine round's rows) while it
// holds back fewer than the returned count, so the sender always gets its grant.
__device__ __forceinline__ uint32_t grant_batch(const MoeParams* prm, int in_hand) {
  const int room = (int)prm->ring_tokens - (int)prm->chunk_tokens - in_hand + 1;
  return (uint32_t)max(1, min((int)prm->chunk_tokens, room));
}

// Grants `rows` more read rows back to the sender, `consumed` in all over the calls (one thread; the reads are
// ordered before it by a barrier).
__device__ __forceinline__ int grant(const Peer& sender, uint64_t credit_sig, uint64_t consumed, uint64_t rows) {
  int st = fence(sender);
  const uint32_t op = counter_op(sender);
  if (st == OK) st = signal(sender, credit_sig, op, op == SIGNAL_SET ? consumed : rows);
  return st;
}

}  // namespace moe
}  // namespace gda4j

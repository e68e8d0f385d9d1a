// gda4j/transport/ibgda/qp.cuh, the GPU's posting protocol, built for the host with g++ (ibgda_host_model.h stands in
// for CUDA) and run by host threads against a model NIC that checks every store reaching it, for IbgdaQpHostTest.
//
// The model NIC is a ConnectX as strict as the protocol needs, and no more lenient:
//   - a doorbell must follow its own doorbell record (which must already hold its producer index) with a system
//     fence between the two, carry the QP's number, never go backwards, never run past the send queue;
//   - it executes WQEs only up to the last doorbell, each checked (WQE index = its counter, the QP number, signaled);
//     a slot rewritten before the NIC ran it shows as an index mismatch;
//   - an RDMA READ's data lands late: only when a later WQE carries the fence bit, after 16 outstanding, or when the
//     NIC goes idle; a WRITE without the fence bit that reads what an outstanding READ fills sends stale bytes (a
//     violation, and the stale bytes land);
//   - CQEs are written in order, never over one the poller has not consumed (CQ overrun); a bad key gives an error
//     CQE (REMOTE_ACCESS, LOCAL_PROT), after which the QP flushes every later WQE (WR_FLUSH).
// Prints "name value" lines (the scenarios' results) and "violation <text>" lines (the first few of each scenario).
//
// Built with: g++ -std=c++17 -O1 -pthread -I src/test/c/host_cuda -I src/test/c -I ../device-ptx/include
//             -DGDA4J_HOST_MODEL='"ibgda_host_model.h"' ibgda_qp_host.cpp
#include "gda4j/transport/ibgda/qp.cuh"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace gda4j;
using namespace gda4j::ibgda;
namespace M = gda4j::mlx5;

constexpr uint32_t LKEY = 0x100;       // this rank's heap
constexpr uint32_t RKEY = 0x200;       // the peer's heap
constexpr uint32_t NULL_LKEY = 0x300;  // the null MR: fetched values are dropped
constexpr uint32_t BAD_RKEY = 0x999;
constexpr uint32_t QPN = 0x1234;
constexpr uint64_t HEAP_BYTES = 1 << 16;
constexpr uint32_t MAX_OUTSTANDING_READS = 16;

// ---- violations -----------------------------------------------------------------------------------------------

std::mutex g_violation_lock;
long g_violations = 0;
int g_printed = 0;

void violation(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void violation(const char* fmt, ...) {
  std::lock_guard<std::mutex> g(g_violation_lock);
  ++g_violations;
  if (g_printed++ < 5) {
    char text[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    std::printf("violation %s\n", text);
  }
}

uint32_t be32_at(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
uint64_t be64_at(const uint8_t* p) { return (uint64_t)be32_at(p) << 32 | be32_at(p + 4); }

// ---- the model NIC --------------------------------------------------------------------------------------------

enum class Mode { PAUSED, EAGER, THREAD };

struct Pending {
  uint64_t counter;
  uint8_t opcode;
  uint8_t syndrome;  // 0 = success
  bool read;         // an RDMA READ whose data has not landed
  uint8_t* dst;
  const uint8_t* src;
  uint64_t len;
};

struct ModelQp {
  DeviceQp* qp = nullptr;
  uint8_t* sq = nullptr;
  uint32_t depth = 0;
  uint8_t* dbrec = nullptr;
  uint64_t doorbell_word = 0;
  uint8_t* cq = nullptr;
  uint32_t cqe_count = 0;
  uint8_t* cq_dbrec = nullptr;
  uint8_t* local = nullptr;
  uint8_t* peer = nullptr;
  Mode mode = Mode::PAUSED;

  std::mutex lock;                // the NIC's own work on this QP
  std::atomic<uint64_t> rung{0};  // counter of the last doorbell
  std::atomic<uint64_t> executed{0};
  uint64_t cq_producer = 0;
  bool failed = false;
  std::deque<Pending> pending;
  long doorbells = 0;
  long executed_wqes = 0;
};

std::vector<ModelQp*> g_qps;

ModelQp* by_doorbell(void* uar) {
  for (ModelQp* m : g_qps) {
    if (&m->doorbell_word == uar) return m;
  }
  return nullptr;
}
ModelQp* by_dbrec_word(void* word) {
  for (ModelQp* m : g_qps) {
    if (m->dbrec + M::DoorbellRecordDescriptor::SEND_COUNTER_OFFSET == word) return m;
  }
  return nullptr;
}

// What this thread stored toward the NIC since its last doorbell.
struct PosterState {
  ModelQp* recorded = nullptr;  // the QP whose doorbell record it stored
  bool fenced = false;          // a system fence since
};
thread_local PosterState t_poster;

bool in_region(const uint8_t* base, uint64_t addr, uint64_t len) {
  const uint64_t b = (uint64_t)base;
  return addr >= b && len <= HEAP_BYTES && addr - b <= HEAP_BYTES - len;
}

// The region a key names, or null.
uint8_t* region(ModelQp* m, uint32_t key, bool remote) {
  if (remote) return key == RKEY ? m->peer : nullptr;
  return key == LKEY ? m->local : nullptr;
}

void write_cqe(ModelQp* m, const Pending& p) {
  const uint32_t ci = be32_at(m->cq_dbrec) & 0xffffff;
  if ((((uint32_t)m->cq_producer - ci) & 0xffffff) >= m->cqe_count) {
    violation("CQ overrun on QP 0x%x: CQE %llu would overwrite one the poller has not consumed (consumer index %u)",
              QPN, (unsigned long long)m->cq_producer, ci);
    return;
  }
  uint8_t* cqe = m->cq + ((m->cq_producer & (m->cqe_count - 1)) << M::CqeDescriptor::CQE_SHIFT);
  std::memset(cqe, 0, M::CqeDescriptor::TAIL_OFFSET);
  const uint8_t opcode = p.syndrome == 0 ? M::CqeOpcode::REQ : M::CqeOpcode::REQ_ERR;
  cqe[M::CqeDescriptor::SYNDROME_OFFSET] = p.syndrome;
  cqe[M::CqeDescriptor::VENDOR_ERR_SYND_OFFSET] = p.syndrome == 0 ? 0 : 0x42;
  uint8_t tail[8];
  tail[0] = p.opcode;
  tail[1] = (uint8_t)(QPN >> 16);
  tail[2] = (uint8_t)(QPN >> 8);
  tail[3] = (uint8_t)QPN;
  tail[4] = (uint8_t)(p.counter >> 8);
  tail[5] = (uint8_t)p.counter;
  tail[6] = 0;
  tail[7] = (uint8_t)(opcode << M::CqeDescriptor::OPCODE_SHIFT | M::cqe_owner_bit(m->cq_producer, m->cqe_count));
  uint64_t word;
  std::memcpy(&word, tail, 8);
  __atomic_store_n(reinterpret_cast<uint64_t*>(cqe + M::CqeDescriptor::TAIL_OFFSET), word, __ATOMIC_RELEASE);
  ++m->cq_producer;
}

// Writes the CQEs of executed WQEs in order; an unlanded READ holds back its own and later ones unless `land`.
void complete(ModelQp* m, bool land) {
  while (!m->pending.empty()) {
    Pending& p = m->pending.front();
    if (p.read) {
      if (!land) return;
      std::memcpy(p.dst, p.src, p.len);
      p.read = false;
    }
    write_cqe(m, p);
    m->pending.pop_front();
  }
}

void land_reads(ModelQp* m) {
  for (Pending& p : m->pending) {
    if (p.read) {
      std::memcpy(p.dst, p.src, p.len);
      p.read = false;
    }
  }
}

int outstanding_reads(ModelQp* m) {
  int n = 0;
  for (const Pending& p : m->pending) n += p.read ? 1 : 0;
  return n;
}

const uint8_t* seg(ModelQp* m, uint64_t c, uint32_t s) {
  return m->sq + M::WqeDescriptor::segment_offset(c, s, m->depth);
}

// Executes the WQE at counter c; returns its WQEBBs (1 for a slot it could not read).
uint32_t execute(ModelQp* m, uint64_t c) {
  using namespace M::WqeDescriptor;
  const uint8_t* ctrl = seg(m, c, CTRL_SEGMENT);
  const uint32_t w0 = be32_at(ctrl);
  const uint32_t w1 = be32_at(ctrl + 4);
  const uint8_t fm = ctrl[CTRL_FM_CE_SE_OFFSET];
  const uint8_t opcode = (uint8_t)(w0 & OPCODE_MASK);
  const uint32_t index = w0 >> WQE_INDEX_SHIFT & WQE_INDEX_MASK;
  const uint32_t ds = w1 & DS_MASK;
  Pending p{c, opcode, 0, false, nullptr, nullptr, 0};
  uint32_t wqebbs = 1;
  if (index != (c & WQE_INDEX_MASK) || (w1 >> QPN_SHIFT) != QPN || ds == 0) {
    violation("WQE at counter %llu (slot %llu) holds index %u, QP 0x%x, ds %u: rewritten before the NIC ran it, or"
              " rung before it was written", (unsigned long long)c, (unsigned long long)(c & (m->depth - 1)), index,
              w1 >> QPN_SHIFT, ds);
    p.syndrome = 0x02;  // LOCAL_QP_OP
  } else {
    wqebbs = wqebbs_for_ds(ds);
    if ((fm & FM_CE_SE_CQ_UPDATE) == 0) {
      violation("WQE at counter %llu is not signaled: every WQE must ask for a CQE (CQEs retire the slots)",
                (unsigned long long)c);
    }
  }
  if (m->failed) {
    p.syndrome = 0x05;  // WR_FLUSH
  }
  if ((fm & FM_CE_SE_FENCE) != 0 || outstanding_reads(m) >= (int)MAX_OUTSTANDING_READS) {
    land_reads(m);
  }
  if (p.syndrome == 0) {
    const uint8_t* rseg = seg(m, c, RADDR_SEGMENT);
    const uint64_t raddr = be64_at(rseg);
    const uint32_t rkey = be32_at(rseg + RADDR_RKEY_OFFSET);
    uint8_t* remote = region(m, rkey, true);
    if (opcode == M::Mlx5Opcode::RDMA_WRITE) {
      const uint8_t* dseg = seg(m, c, RDMA_DATA_SEGMENT);
      const uint32_t first = be32_at(dseg);
      if (first & INLINE_SEG) {
        const uint32_t len = first & INLINE_BYTE_COUNT_MASK;
        if (remote == nullptr || !in_region(remote, raddr, len)) {
          p.syndrome = 0x13;  // REMOTE_ACCESS
        } else {
          uint8_t bytes[MAX_INLINE_BYTES];
          for (uint32_t i = 0; i < len; ++i) {
            const uint32_t at = INLINE_HEADER_SIZE + i;
            bytes[i] = seg(m, c, INLINE_SEGMENT + at / SEGMENT_SIZE)[at % SEGMENT_SIZE];
          }
          // 8-byte pieces as the emulated NIC writes them (the slot rule tolerates halves landing apart).
          for (uint32_t i = 0; i < len; i += 8) {
            uint64_t piece = 0;
            std::memcpy(&piece, bytes + i, len - i < 8 ? len - i : 8);
            if (len - i >= 8 && (raddr + i) % 8 == 0) {
              __atomic_store_n(reinterpret_cast<uint64_t*>(raddr + i), piece, __ATOMIC_RELEASE);
            } else {
              std::memcpy(reinterpret_cast<void*>(raddr + i), &piece, len - i < 8 ? len - i : 8);
            }
          }
        }
      } else {
        const uint32_t len = first;
        const uint32_t lkey = be32_at(dseg + DATA_LKEY_OFFSET);
        const uint64_t laddr = be64_at(dseg + DATA_ADDR_OFFSET);
        uint8_t* local = region(m, lkey, false);
        if (remote == nullptr || !in_region(remote, raddr, len)) {
          p.syndrome = 0x13;
        } else if (local == nullptr || !in_region(local, laddr, len)) {
          p.syndrome = 0x04;  // LOCAL_PROT
        } else {
          for (const Pending& r : m->pending) {
            if (r.read && (uint64_t)r.dst < laddr + len && laddr < (uint64_t)r.dst + r.len) {
              violation("WRITE at counter %llu reads [0x%llx, +%u), which the READ at counter %llu has not filled"
                        " yet, and carries no fence bit: it sends stale bytes", (unsigned long long)c,
                        (unsigned long long)laddr, len, (unsigned long long)r.counter);
              break;
            }
          }
          std::memcpy(reinterpret_cast<void*>(raddr), reinterpret_cast<const void*>(laddr), len);
        }
      }
    } else if (opcode == M::Mlx5Opcode::RDMA_READ) {
      const uint8_t* dseg = seg(m, c, RDMA_DATA_SEGMENT);
      const uint32_t len = be32_at(dseg);
      uint8_t* local = region(m, be32_at(dseg + DATA_LKEY_OFFSET), false);
      const uint64_t laddr = be64_at(dseg + DATA_ADDR_OFFSET);
      if (remote == nullptr || !in_region(remote, raddr, len)) {
        p.syndrome = 0x13;
      } else if (local == nullptr || !in_region(local, laddr, len)) {
        p.syndrome = 0x04;
      } else {
        p.read = true;
        p.dst = reinterpret_cast<uint8_t*>(laddr);
        p.src = reinterpret_cast<const uint8_t*>(raddr);
        p.len = len;
      }
    } else if (opcode == M::Mlx5Opcode::ATOMIC_FA) {
      const uint64_t add = be64_at(seg(m, c, ATOMIC_SEGMENT));
      const uint8_t* dseg = seg(m, c, ATOMIC_DATA_SEGMENT);
      const uint32_t lkey = be32_at(dseg + DATA_LKEY_OFFSET);
      const uint64_t laddr = be64_at(dseg + DATA_ADDR_OFFSET);
      if (remote == nullptr || raddr % 8 != 0 || !in_region(remote, raddr, 8)) {
        p.syndrome = 0x13;
      } else if (lkey != NULL_LKEY && (region(m, lkey, false) == nullptr || !in_region(m->local, laddr, 8))) {
        p.syndrome = 0x04;
      } else {
        const uint64_t old = __atomic_fetch_add(reinterpret_cast<uint64_t*>(raddr), add, __ATOMIC_ACQ_REL);
        if (lkey != NULL_LKEY) std::memcpy(reinterpret_cast<void*>(laddr), &old, 8);
      }
    } else {
      violation("WQE at counter %llu has opcode 0x%x, which the protocol never posts", (unsigned long long)c, opcode);
      p.syndrome = 0x02;
    }
  }
  if (p.syndrome != 0) m->failed = true;
  m->pending.push_back(p);
  ++m->executed_wqes;
  return wqebbs;
}

// Runs what the doorbells covered; `steps` WQEs at most (0 = all), then writes the CQEs that may be written.
void run_nic(ModelQp* m, uint32_t steps, bool land_when_idle) {
  std::lock_guard<std::mutex> g(m->lock);
  uint64_t at = m->executed.load(std::memory_order_relaxed);
  const uint64_t until = m->rung.load(std::memory_order_acquire);
  uint32_t done = 0;
  while (at < until && (steps == 0 || done < steps)) {
    at += execute(m, at);
    ++done;
  }
  m->executed.store(at, std::memory_order_release);
  complete(m, land_when_idle && at >= until);
}

void model_doorbell(ModelQp* m, uint64_t value) {
  const uint32_t lo = __builtin_bswap32((uint32_t)value);
  const uint32_t hi = __builtin_bswap32((uint32_t)(value >> 32));
  const uint32_t pi16 = lo >> M::WqeDescriptor::WQE_INDEX_SHIFT & 0xffff;
  if ((hi >> M::WqeDescriptor::QPN_SHIFT) != QPN || (lo & 0xff) != 0 || (hi & 0xff) != 0) {
    violation("malformed doorbell 0x%016llx", (unsigned long long)value);
  }
  if (t_poster.recorded != m) {
    violation("doorbell for producer index %u without a doorbell record stored before it by the ringing thread", pi16);
  } else if (!t_poster.fenced) {
    violation("doorbell for producer index %u with no system fence between the doorbell record and the doorbell",
              pi16);
  }
  const uint32_t record = be32_at(m->dbrec + M::DoorbellRecordDescriptor::SEND_COUNTER_OFFSET);
  if (record != pi16) {
    violation("doorbell for producer index %u while the doorbell record holds %u: rung before its record", pi16,
              record);
  }
  t_poster = PosterState{};
  __atomic_store_n(&m->doorbell_word, value, __ATOMIC_RELEASE);
  {
    std::lock_guard<std::mutex> g(m->lock);
    ++m->doorbells;
    const uint64_t old = m->rung.load(std::memory_order_relaxed);
    const uint64_t next = old + ((pi16 - (uint32_t)old) & 0xffff);
    if (next == old) {
      violation("doorbell repeats producer index %u", pi16);
    } else if (next - m->executed.load(std::memory_order_relaxed) > m->depth) {
      violation("doorbell for producer index %llu runs past the send queue of %u WQEBBs (the NIC consumed %llu)",
                (unsigned long long)next, m->depth, (unsigned long long)m->executed.load());
    }
    m->rung.store(next, std::memory_order_release);
  }
  if (m->mode == Mode::EAGER) run_nic(m, 0, true);
}

// ---- a QP, its rings and two heaps ----------------------------------------------------------------------------

template <typename T>
T* aligned(size_t bytes, size_t alignment) {
  void* p = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  std::memset(p, 0, bytes);
  return static_cast<T*>(p);
}

struct Fixture {
  ModelQp model;
  DeviceView* view;
  ErrorRecord* record;
  uint64_t* abort_flag;
  DeviceQp* qp;
  uint8_t* wqe_sizes;

  // `place`: where the DeviceQp goes (entry `index` of an array of `count`, one peer's QPs), or null for one of its own.
  Fixture(uint32_t depth, Mode mode, uint64_t timeout_ns, DeviceQp* place = nullptr, uint32_t index = 0,
          uint32_t count = 1) {
    view = aligned<DeviceView>(sizeof(DeviceView) + sizeof(PeerEntry), 64);
    record = aligned<ErrorRecord>(sizeof(ErrorRecord), 64);
    abort_flag = aligned<uint64_t>(8, 8);
    qp = place != nullptr ? place : aligned<DeviceQp>(sizeof(DeviceQp), 256);
    qp->qp_count = count;
    qp->qp_index = index;
    wqe_sizes = aligned<uint8_t>(depth, 64);
    view->rank = 0;
    view->nranks = 1;
    view->abort_flag = (uint64_t)abort_flag;
    view->error_record = (uint64_t)record;
    view->timeout_ns = timeout_ns;
    ModelQp& m = model;
    m.qp = qp;
    m.depth = depth;
    m.cqe_count = depth;
    m.mode = mode;
    m.sq = aligned<uint8_t>((size_t)depth * 64, 64);
    m.dbrec = aligned<uint8_t>(8, 8);
    m.cq = aligned<uint8_t>((size_t)depth * 64, 64);
    for (uint32_t i = 0; i < depth; ++i) {
      m.cq[i * 64 + M::CqeDescriptor::OP_OWN_OFFSET] = M::CqeOpcode::INVALID << M::CqeDescriptor::OPCODE_SHIFT;
    }
    m.cq_dbrec = aligned<uint8_t>(8, 8);
    m.local = aligned<uint8_t>(HEAP_BYTES, 64);
    m.peer = aligned<uint8_t>(HEAP_BYTES, 64);
    qp->sq_buf = (uint64_t)m.sq;
    qp->dbrec = (uint64_t)m.dbrec;
    qp->doorbell = (uint64_t)&m.doorbell_word;
    qp->cq_buf = (uint64_t)m.cq;
    qp->cq_dbrec = (uint64_t)m.cq_dbrec;
    qp->wqe_sizes = (uint64_t)wqe_sizes;
    qp->sq_wqebbs = depth;
    qp->cqe_count = depth;
    qp->qpn = QPN;
    qp->local_base = (uint64_t)m.local;
    qp->remote_base = (uint64_t)m.peer;
    qp->heap_size_bytes = HEAP_BYTES;
    qp->lkey = LKEY;
    qp->rkey = RKEY;
    qp->discard_lkey = NULL_LKEY;
    qp->max_inline = 64;
    qp->peer = 1;
    g_qps.push_back(&m);
  }
  ~Fixture() {
    for (size_t i = 0; i < g_qps.size(); ++i) {
      if (g_qps[i] == &model) g_qps.erase(g_qps.begin() + (long)i);
    }
  }

  uint8_t wqe_flags(uint64_t counter) const {
    return model.sq[(counter & (model.depth - 1)) * 64 + M::WqeDescriptor::CTRL_FM_CE_SE_OFFSET];
  }
};

void put_value(std::initializer_list<std::pair<const char*, long long>> values) {
  for (const auto& kv : values) std::printf("%s %lld\n", kv.first, kv.second);
}

long take_violations() {
  std::lock_guard<std::mutex> g(g_violation_lock);
  const long n = g_violations;
  g_violations = 0;
  g_printed = 0;
  return n;
}

constexpr uint64_t MS = 1000000ull;

// get(buf) then put(from buf): the put carries the fence bit while the READ is outstanding, so it sends the fetched
// bytes; once the READ has completed, a put carries none.
void fence_scenario() {
  Fixture f(32, Mode::PAUSED, 2000 * MS);
  const uint64_t fresh = 0x1111222233334444ull;
  std::memcpy(f.model.peer, &fresh, 8);
  const int got = get(f.view, f.qp, 1, 64, 0, 8);
  const int put1 = put(f.view, f.qp, 1, OP_PUT, 128, 64, 8);
  const long fenced = (f.wqe_flags(1) & M::WqeDescriptor::FM_CE_SE_FENCE) != 0;
  run_nic(&f.model, 0, true);
  const int quiet1 = quiet(f.view, f.qp, 1);
  uint64_t sent;
  std::memcpy(&sent, f.model.peer + 128, 8);
  const int put2 = put(f.view, f.qp, 1, OP_PUT, 256, 64, 8);
  const long fenced_after = (f.wqe_flags(2) & M::WqeDescriptor::FM_CE_SE_FENCE) != 0;
  run_nic(&f.model, 0, true);
  const int quiet2 = quiet(f.view, f.qp, 1);
  put_value({{"fence_statuses", (long long)(got | put1 | quiet1 | put2 | quiet2)},
             {"fence_put_after_get", fenced},
             {"fence_sent_fetched_bytes", sent == fresh},
             {"fence_after_completion", fenced_after},
             {"fence_violations", take_violations()}});
}

// Every call rings: each doorbell follows its record, with a system fence between, and covers what was posted.
void doorbell_scenario() {
  Fixture f(64, Mode::EAGER, 2000 * MS);
  int st = 0;
  st |= put(f.view, f.qp, 1, OP_PUT, 0, 0, 4096);
  st |= put_signal(f.view, f.qp, 1, 4096, 0, 100, 8192, SIGNAL_SET, 7);
  st |= signal(f.view, f.qp, 1, OP_SIGNAL, 8200, SIGNAL_ADD, 3);
  st |= put_inline(f.view, f.qp, 1, 8208, 0xabcdef, 1);
  st |= get(f.view, f.qp, 1, 1024, 0, 64);
  st |= quiet(f.view, f.qp, 1);
  uint64_t set_word, add_word;
  std::memcpy(&set_word, f.model.peer + 8192, 8);
  std::memcpy(&add_word, f.model.peer + 8200, 8);
  put_value({{"doorbell_statuses", st},
             {"doorbell_count", f.model.doorbells},
             {"doorbell_rung", (long long)f.model.rung.load()},
             {"doorbell_posted", (long long)f.qp->resv_head},
             {"doorbell_signals", set_word == 7 && add_word == 3},
             {"doorbell_violations", take_violations()}});
}

// A WQE the NIC refuses (a bad rkey): quiet returns ERR_TRANSPORT with the CQE's syndrome in the record, the QP is
// failed, and the next call on it fails at once without posting.
void error_scenario() {
  Fixture f(32, Mode::EAGER, 2000 * MS);
  f.qp->rkey = BAD_RKEY;
  const int posted = put(f.view, f.qp, 1, OP_PUT, 0, 0, 64);
  const int quieted = quiet(f.view, f.qp, 1);
  const uint64_t reserved = f.qp->resv_head;
  const int next = put(f.view, f.qp, 1, OP_PUT, 0, 0, 64);
  put_value({{"error_post_status", posted},
             {"error_quiet_status", quieted},
             {"error_record_code", f.record->code},
             {"error_record_syndrome", (long long)(f.record->seen & 0xff)},
             {"error_record_wqe_opcode", (long long)f.record->expected},
             {"error_record_qpn", f.record->cmp},
             {"error_qp_failed", f.qp->error != 0},
             {"error_next_status", next},
             {"error_next_posted", (long long)(f.qp->resv_head - reserved)},
             {"error_violations", take_violations()}});
}

// A full ring and a NIC that does not answer: the post after the ring is full waits for completions, and gives up
// with ERROR_SQ_FULL instead of rewriting a slot the NIC has not run.
void sq_full_scenario() {
  Fixture f(8, Mode::PAUSED, 30 * MS);
  int ok = 0;
  for (int i = 0; i < 8; ++i) ok += put(f.view, f.qp, 1, OP_PUT, 64 * i, 0, 64) == OK;
  const int ninth = put(f.view, f.qp, 1, OP_PUT, 1024, 0, 64);
  const uint32_t code = f.record->code;
  const uint32_t qp_error = f.qp->error;
  run_nic(&f.model, 0, true);
  put_value({{"sq_full_first_ok", ok},
             {"sq_full_status", ninth},
             {"sq_full_record_code", code},
             {"sq_full_qp_failed", (qp_error & (ERROR_SET | ERROR_POSTING)) == (ERROR_SET | ERROR_POSTING)},
             {"sq_full_nic_ran", f.model.executed_wqes},
             {"sq_full_violations", take_violations()}});
}

// Four threads post every kind of call at once on a ring of 32 WQEBBs, against a NIC thread that lags: nothing is
// lost, run twice or overwritten, every signal lands, and the fetched bytes are what a later put sends.
void stress_scenario(int per_thread) {
  constexpr int THREADS = 4;
  Fixture f(32, Mode::THREAD, 20000 * MS);
  std::atomic<bool> stop{false};
  std::thread nic([&] {
    uint32_t rng = 12345;
    while (!stop.load(std::memory_order_acquire)) {
      rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
      const bool busy = f.model.rung.load(std::memory_order_acquire) > f.model.executed.load();
      run_nic(&f.model, 1 + rng % 4, !busy || rng % 8 == 0);
      if (rng % 3 == 0) std::this_thread::yield();
    }
  });
  std::atomic<long> failed_calls{0};
  std::vector<long> adds(THREADS, 0);
  std::vector<std::thread> posters;
  for (int t = 0; t < THREADS; ++t) {
    posters.emplace_back([&, t] {
      threadIdx.x = t;
      const uint64_t area = 4096ull * (t + 1);  // this thread's part of both heaps
      for (int i = 0; i < per_thread; ++i) {
        int st = OK;
        switch (i % 5) {
          case 0:
            st = put_signal(f.view, f.qp, 1, area + 64 * (i % 8), area, 64, area + 2048, SIGNAL_ADD, 1);
            ++adds[t];
            break;
          case 1:
            st = put_inline(f.view, f.qp, 1, area + 2064, (uint64_t)i, (uint32_t)i);
            break;
          case 2:
            st = signal(f.view, f.qp, 1, OP_SIGNAL, area + 2056, SIGNAL_SET, (uint64_t)i);
            break;
          case 3:
            if (t == 0) {  // a get, then a put from what it fetched
              st = get(f.view, f.qp, 1, area + 1024, area + 3072, 64);
              if (st == OK) st = put(f.view, f.qp, 1, OP_PUT, area + 3136, area + 1024, 64);
            } else {
              st = put(f.view, f.qp, 1, OP_PUT, area + 1024, area, 200);
            }
            break;
          default:
            st = put(f.view, f.qp, 1, OP_PUT, area + 512, area + 64, 8);
            break;
        }
        if (st != OK) {
          failed_calls.fetch_add(1);
          return;
        }
        if (t == 0 && i % 5 == 3) {  // the peer's source for the next get changes
          uint64_t next = (uint64_t)i << 8 | 0x5a;
          __atomic_store_n(reinterpret_cast<uint64_t*>(f.model.peer + area + 3072), next, __ATOMIC_RELAXED);
        }
      }
      if (quiet(f.view, f.qp, 1) != OK) failed_calls.fetch_add(1);
    });
  }
  for (std::thread& p : posters) p.join();
  stop.store(true, std::memory_order_release);
  nic.join();
  run_nic(&f.model, 0, true);
  long counter_mismatches = 0;
  for (int t = 0; t < THREADS; ++t) {
    uint64_t counted;
    std::memcpy(&counted, f.model.peer + 4096ull * (t + 1) + 2048, 8);
    counter_mismatches += counted != (uint64_t)adds[t];
  }
  put_value({{"stress_calls", (long long)THREADS * per_thread},
             {"stress_failed_calls", failed_calls.load()},
             {"stress_counter_mismatches", counter_mismatches},
             {"stress_posted", (long long)f.qp->resv_head},
             {"stress_executed", (long long)f.model.executed.load()},
             {"stress_retired", (long long)f.qp->cons_head},
             {"stress_error_code", f.record->code},
             {"stress_violations", take_violations()}});
}

// Two QPs to one peer, the first run late by a NIC thread, the second at once: a put on the first, then a signal on
// the second. fence_qps between them (what fence(peer) does over several QPs) keeps the signal behind the data; the
// same without it is the control, in which the signal overtakes.
void several_qps_scenario() {
  constexpr uint64_t DATA = 0, FLAG = 4096, BYTES = 256;
  long overtaken[2] = {0, 0};
  int statuses = 0;
  for (int fenced = 0; fenced < 2; ++fenced) {
    DeviceQp* array = aligned<DeviceQp>(2 * sizeof(DeviceQp), 256);
    Fixture slow(32, Mode::PAUSED, 2000 * MS, array, 0, 2);
    Fixture fast(32, Mode::EAGER, 2000 * MS, array + 1, 1, 2);
    fast.model.local = slow.model.local;  // one pair of heaps: both QPs go from this rank to the same peer
    fast.model.peer = slow.model.peer;
    fast.qp->local_base = slow.qp->local_base;
    fast.qp->remote_base = slow.qp->remote_base;
    std::memset(slow.model.local, 0x5a, BYTES);
    std::atomic<bool> stop{false};
    auto late_nic = [&] {
      while (!stop.load(std::memory_order_acquire)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        run_nic(&slow.model, 0, true);
      }
    };
    // Unfenced, the first QP runs only after the look below: the control is deterministic.
    std::thread nic;
    if (fenced) nic = std::thread(late_nic);
    statuses |= qp_for(array, 0) == array && qp_for(array, 3) == array + 1 && qp_base(array + 1) == array ? 0 : 1;
    statuses |= put(slow.view, array, 1, OP_PUT, DATA, 0, BYTES);
    if (fenced) statuses |= fence_qps(fast.view, array + 1, 1);
    statuses |= signal(fast.view, array + 1, 1, OP_SIGNAL, FLAG, SIGNAL_SET, 1);
    // The flag is there now (the second QP runs at once): is the data it covers?
    uint64_t flag, first;
    std::memcpy(&flag, slow.model.peer + FLAG, 8);
    std::memcpy(&first, slow.model.peer + DATA, 8);
    overtaken[fenced] = flag == 1 && first != 0x5a5a5a5a5a5a5a5aull;
    if (!fenced) nic = std::thread(late_nic);
    statuses |= quiet(slow.view, array, 1) | quiet(fast.view, array + 1, 1);
    stop.store(true, std::memory_order_release);
    nic.join();
  }
  put_value({{"qps_statuses", statuses},
             {"qps_unfenced_overtaken", overtaken[0]},
             {"qps_fenced_overtaken", overtaken[1]},
             {"qps_violations", take_violations()}});
}

}  // namespace

namespace gda4j_model {
void on_dbrec_store(void* word, uint32_t) {
  ModelQp* m = by_dbrec_word(word);
  if (m == nullptr) violation("doorbell record store to an unknown address");
  t_poster = PosterState{m, false};
}
void on_doorbell(void* uar, uint64_t value) {
  ModelQp* m = by_doorbell(uar);
  if (m == nullptr) {
    violation("doorbell store to an unknown address");
    return;
  }
  model_doorbell(m, value);
}
void on_fence_system() {
  if (t_poster.recorded != nullptr) t_poster.fenced = true;
}
}  // namespace gda4j_model

int main(int argc, char** argv) {
  const int per_thread = argc > 1 ? std::atoi(argv[1]) : 2000;
  fence_scenario();
  doorbell_scenario();
  error_scenario();
  sq_full_scenario();
  several_qps_scenario();
  stress_scenario(per_thread);
  return 0;
}

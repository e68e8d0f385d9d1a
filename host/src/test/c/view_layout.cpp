// Prints the layout of gda4j/layout/view.cuh as "name value" lines; DeviceViewLayoutTest compares them with the Java
// descriptors. layout/view.cuh is plain C++ (no CUDA builtins), so g++ compiles it on machines without nvcc.
#define __device__
#include <cstddef>
#include <cstdio>
#include "gda4j/layout/view.cuh"
#include "gda4j/layout/inline_slot.cuh"

using namespace gda4j;
#define P(name, value) std::printf("%s %lld\n", name, (long long)(value))

int main() {
  P("VIEW_MAGIC", VIEW_MAGIC);
  P("VIEW_VERSION", VIEW_VERSION);
  P("MAGIC_OFFSET", offsetof(DeviceView, magic));
  P("VERSION_OFFSET", offsetof(DeviceView, version));
  P("RANK_OFFSET", offsetof(DeviceView, rank));
  P("NRANKS_OFFSET", offsetof(DeviceView, nranks));
  P("HEAP_BASE_OFFSET", offsetof(DeviceView, heap_base));
  P("HEAP_SIZE_BYTES_OFFSET", offsetof(DeviceView, heap_size_bytes));
  P("ABORT_FLAG_OFFSET", offsetof(DeviceView, abort_flag));
  P("ERROR_RECORD_OFFSET", offsetof(DeviceView, error_record));
  P("TIMEOUT_NS_OFFSET", offsetof(DeviceView, timeout_ns));
  P("FLAGS_OFFSET", offsetof(DeviceView, flags));
  P("HEADER_LENGTH", offsetof(DeviceView, peers));
  P("PEER_TRANSPORT_OFFSET", offsetof(PeerEntry, transport));
  P("PEER_RANK_OFFSET", offsetof(PeerEntry, rank));
  P("PEER_HEAP_OFFSET", offsetof(PeerEntry, peer_heap));
  P("PEER_HANDLE_OFFSET", offsetof(PeerEntry, handle));
  P("PEER_RKEY_OFFSET", offsetof(PeerEntry, rkey));
  P("PEER_LKEY_OFFSET", offsetof(PeerEntry, lkey));
  P("PEER_ABORT_FLAG_OFFSET", offsetof(PeerEntry, peer_abort_flag));
  P("PEER_CAPS_OFFSET", offsetof(PeerEntry, caps));
  P("PEER_ENTRY_LENGTH", sizeof(PeerEntry));
  P("ERR.CODE_OFFSET", offsetof(ErrorRecord, code));
  P("ERR.RANK_OFFSET", offsetof(ErrorRecord, rank));
  P("ERR.PEER_OFFSET", offsetof(ErrorRecord, peer));
  P("ERR.OP_OFFSET", offsetof(ErrorRecord, op));
  P("ERR.OFFSET_OFFSET", offsetof(ErrorRecord, offset));
  P("ERR.EXPECTED_OFFSET", offsetof(ErrorRecord, expected));
  P("ERR.SEEN_OFFSET", offsetof(ErrorRecord, seen));
  P("ERR.ELAPSED_NS_OFFSET", offsetof(ErrorRecord, elapsed_ns));
  P("ERR.BLOCK_OFFSET", offsetof(ErrorRecord, block));
  P("ERR.THREAD_OFFSET", offsetof(ErrorRecord, thread));
  P("ERR.CMP_OFFSET", offsetof(ErrorRecord, cmp));
  P("ERR.CLAIMED_OFFSET", offsetof(ErrorRecord, claimed));
  P("ERR.LENGTH", sizeof(ErrorRecord));
  P("CODE.NONE", ERROR_NONE);
  P("CODE.WAIT_TIMEOUT", ERROR_WAIT_TIMEOUT);
  P("CODE.OUT_OF_RANGE", ERROR_OUT_OF_RANGE);
  P("CODE.BAD_PEER", ERROR_BAD_PEER);
  P("CODE.UNSUPPORTED_TRANSPORT", ERROR_UNSUPPORTED_TRANSPORT);
  P("CODE.MISALIGNED", ERROR_MISALIGNED);
  P("CODE.MIXED_ATOMICS", ERROR_MIXED_ATOMICS);
  P("PEER_NIC_ATOMICS", PEER_NIC_ATOMICS);
  P("PEER_HANDLE_FLAGS", PEER_HANDLE_FLAGS);
  P("OP.NONE", OP_NONE);
  P("OP.PUT", OP_PUT);
  P("OP.PUT_SIGNAL", OP_PUT_SIGNAL);
  P("OP.SIGNAL", OP_SIGNAL);
  P("OP.WAIT_UNTIL", OP_WAIT_UNTIL);
  P("OP.FENCE", OP_FENCE);
  P("OP.QUIET", OP_QUIET);
  P("OP.ATOMIC_ADD", OP_ATOMIC_ADD);
  P("OP.PUT_INLINE", OP_PUT_INLINE);
  P("OP.FLUSH", OP_FLUSH);
  P("OP.GET", OP_GET);
  P("SIGNAL.SET", SIGNAL_SET);
  P("SIGNAL.ADD", SIGNAL_ADD);
  P("CMP.EQ", CMP_EQ);
  P("CMP.NE", CMP_NE);
  P("CMP.GT", CMP_GT);
  P("CMP.GE", CMP_GE);
  P("CMP.LT", CMP_LT);
  P("CMP.LE", CMP_LE);
  P("SLOT.SIZE", InlineSlotDescriptor::SIZE);
  P("SLOT.ALIGNMENT", InlineSlotDescriptor::ALIGNMENT);
  P("SLOT.HALF_SIZE", InlineSlotDescriptor::HALF_SIZE);
  P("SLOT.LO_HALF_OFFSET", InlineSlotDescriptor::LO_HALF_OFFSET);
  P("SLOT.HI_HALF_OFFSET", InlineSlotDescriptor::HI_HALF_OFFSET);
  P("SLOT.SEQ_SHIFT", InlineSlotDescriptor::SEQ_SHIFT);
  P("SLOT.half(0x11223344,7)", InlineSlotDescriptor::half(0x11223344u, 7));
  P("SLOT.whole(7,7,7)", InlineSlotDescriptor::is_whole_at_or_after(InlineSlotDescriptor::half(1, 7), InlineSlotDescriptor::half(2, 7), 7));
  P("SLOT.whole(8,7,7)", InlineSlotDescriptor::is_whole_at_or_after(InlineSlotDescriptor::half(1, 8), InlineSlotDescriptor::half(2, 7), 7));
  P("SLOT.whole(8,8,7)", InlineSlotDescriptor::is_whole_at_or_after(InlineSlotDescriptor::half(1, 8), InlineSlotDescriptor::half(2, 8), 7));
  P("SLOT.whole(6,6,7)", InlineSlotDescriptor::is_whole_at_or_after(InlineSlotDescriptor::half(1, 6), InlineSlotDescriptor::half(2, 6), 7));
  P("SLOT.whole(1,1,0xffffffff)", InlineSlotDescriptor::is_whole_at_or_after(InlineSlotDescriptor::half(1, 1), InlineSlotDescriptor::half(2, 1), 0xffffffffu));
  return 0;
}

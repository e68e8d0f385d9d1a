// Prints gda4j/transports.def, as the device headers read it, for TransportTableTest: one "CAP" line per capability
// and one "ROW" line per transport, tab-separated, in the table's order, and what layout/view.cuh derives from the
// rows (TRANSPORT_<NAME>, CAPS_<NAME>, VIEW_FLAG_<NAME>, TRANSPORT_COUNT).
#define __device__
#include <cstdio>
#include "gda4j/layout/view.cuh"

using namespace gda4j;

int main() {
#define GDA4J_CAPABILITY(NAME, bit) std::printf("CAP\t%s\t%u\t%u\n", #NAME, (unsigned)(bit), (unsigned)CAP_##NAME);
#include "gda4j/transports.def"
#undef GDA4J_CAPABILITY
#define GDA4J_TRANSPORT(NAME, name, code, phrase, capabilities, view_flag)                                           \
  std::printf("ROW\t%s\t%s\t%u\t%u\t%u\t%s\n", #NAME, #name, (unsigned)(code), (unsigned)(capabilities),             \
              (unsigned)(view_flag), phrase);                                                                         \
  std::printf("DERIVED\t%s\t%u\t%u\t%u\n", #NAME, (unsigned)TRANSPORT_##NAME, (unsigned)CAPS_##NAME,                  \
              (unsigned)VIEW_FLAG_##NAME);
#include "gda4j/transports.def"
#undef GDA4J_TRANSPORT
  std::printf("COUNT\t%u\n", (unsigned)TRANSPORT_COUNT);
  return 0;
}

// Prints gda4j/transport/p2p/p2p.cuh's constants (its plain C++ part) as "name value" lines for P2pLayoutTest.
#include <cstdio>
#include "gda4j/transport/p2p/p2p.cuh"

#define P(name, value) std::printf("%s %lld\n", name, (long long)(value))

int main() {
  P("NO_NATIVE_ATOMICS", gda4j::p2p::NO_NATIVE_ATOMICS);
  P("CODE.NO_NATIVE_ATOMICS", gda4j::ERROR_NO_NATIVE_ATOMICS);
  return 0;
}

#include "base/clock.hpp"

#include <chrono>

namespace runara {

double monotonic_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace runara

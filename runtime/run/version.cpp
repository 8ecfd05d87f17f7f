#include "runara/runtime.hpp"

namespace runara {
std::string version() { return RUNARA_VERSION; }
}  // namespace runara

// The `thresholds` option of http_load.run: { ttft_p99_ms = 500, failure_rate = 0.01, ... }
// checked into the engine's Thresholds (runtime/load/thresholds.hpp).
//
// Contract. Lua thread only; raises a Lua error naming the option, the threshold and what was
// expected (with "did you mean") on bad input. Pushes nothing.
#pragma once

#include <memory>

#include <lua.hpp>

#include "load/thresholds.hpp"

namespace runara {

// null when the option is absent or empty.
std::shared_ptr<const Thresholds> parse_thresholds_option(lua_State* L, int options_index, const char* fn);

}  // namespace runara

// The REPL's display of a Lua value: strings quoted, tables pretty-printed.
//
// Contract: raw access only (no metamethod, no script code runs), so it cannot hang in Lua; and
// bounded in C++ too, since the script built the value: at most kPrettyMaxDepth levels,
// kPrettyMaxWidth entries per table, kPrettyMaxBytes of output in all; a table already shown
// (a cycle, or a subtable shared in a DAG) prints as a short marker instead of again.
// `stop` is asked every few entries (the runtime passes "the run is stopping", so the watchdog
// ends a long print as it ends a long statement). `redact` is applied to every string before it
// is cut to the budget, so a cut never leaves the start of a secret unmasked. Runs on the Lua
// thread; leaves the Lua stack as it found it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <lua.hpp>

namespace runara {

inline constexpr int kPrettyMaxDepth = 6;
inline constexpr int kPrettyMaxWidth = 200;
inline constexpr std::size_t kPrettyMaxBytes = 64 * 1024;

struct PrettyOptions {
  std::function<bool()> stop;                                 // true: end the print now
  std::function<std::string(std::string_view)> redact;        // masks secrets in a string
  // How far past the cut a string is read before it is redacted: at least the longest secret,
  // so that a secret straddling the cut is still recognised and masked, never shown in part.
  std::size_t redact_margin = 4096;
};

std::string pretty_value(lua_State* L, int index, const PrettyOptions& options = {});

// Lets the REPL show values whose metatable is the one at `index` (a runtime-made one: tasks,
// droplets) through its C __tostring ("task 3 (running)") instead of "userdata" or their raw
// fields. Only metatables marked here count: a script cannot make the printer call anything.
void mark_displayable(lua_State* L, int metatable_index);

}  // namespace runara

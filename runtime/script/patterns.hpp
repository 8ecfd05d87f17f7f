// Guarded replacements for Lua's pattern-matching string functions.
//
// LuaJIT's string.find/match/gmatch/gsub run their matcher entirely in C,
// where no Lua hook fires, so a pathological pattern (for instance
// ("a"):rep(1e5):find(("a-"):rep(30) .. "b")) can keep a script busy for
// seconds out of the watchdog's reach. install_guarded_patterns() swaps them
// for a port of Lua 5.1's matcher (with LuaJIT 2.1's adjustments) that counts
// its work and periodically asks a caller-supplied check whether to go on.
#pragma once

#include <string>

struct lua_State;

namespace runara {

// Called every few thousand match steps; return a non-empty message to abort
// the match with that Lua error. The check runs on the matching lua_State and
// must leave its stack as it found it.
using PatternInterrupt = std::string (*)(lua_State* L);

// Work units between two calls of the check. A unit is roughly one byte of
// subject or pattern examined, so a check happens every few microseconds of
// matching.
inline constexpr int kPatternStepsPerCheck = 4096;

// Deepest nesting of the matcher's recursion (LuaJIT's LJ_MAX_XLEVEL, Lua's
// MAXCCALLS); deeper patterns fail with "pattern too complex".
inline constexpr int kPatternMaxDepth = 200;

// Replaces find/match/gmatch/gsub (and gfind, where the table has it) in the
// table at stack index `string_table` with guarded versions. `check` may be
// null: the functions are then still depth-bounded but never interrupted.
// Each installed function carries its own check, so lua_States in one process
// may use different checks.
void install_guarded_patterns(lua_State* L, int string_table, PatternInterrupt check);

}  // namespace runara

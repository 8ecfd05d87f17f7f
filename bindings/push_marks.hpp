// A sampler's marks as the Lua array its results carry, {{t_s = 1.5, label = "load"}, ...}:
// gpu_metrics and metrics alike (their mark types share these two fields); and its problems, as
// an array of strings, each redacted (they may quote what a machine or a server printed).
//
// Contract: pushes one table on L; call where an allocation failure is caught (a binding).
#pragma once

#include <string>

#include <lua.hpp>

#include "runara/primitive.hpp"

namespace runara {

template <class Marks>
void push_marks(lua_State* L, const Marks& marks) {
  lua_createtable(L, static_cast<int>(marks.size()), 0);
  for (std::size_t m = 0; m < marks.size(); ++m) {
    lua_createtable(L, 0, 2);
    lua_pushnumber(L, marks[m].t_s);
    lua_setfield(L, -2, "t_s");
    lua_pushlstring(L, marks[m].label.data(), marks[m].label.size());
    lua_setfield(L, -2, "label");
    lua_rawseti(L, -2, static_cast<int>(m + 1));
  }
}

// `ctx` null: as they are (tests).
template <class Problems>
void push_problems(lua_State* L, const Problems& problems, const Context* ctx) {
  lua_createtable(L, static_cast<int>(problems.size()), 0);
  int i = 0;
  for (const auto& p : problems) {
    const std::string shown = ctx ? ctx->redact(p) : p;
    lua_pushlstring(L, shown.data(), shown.size());
    lua_rawseti(L, -2, ++i);
  }
}

}  // namespace runara

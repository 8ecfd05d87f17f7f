#include "http_load_thresholds.hpp"

#include <algorithm>

#include "kit/raise.hpp"
#include "script/args.hpp"

namespace runara {

std::shared_ptr<const Thresholds> parse_thresholds_option(lua_State* L, int options_index, const char* fn) {
  lua_getfield(L, options_index, "thresholds");
  const int t = lua_gettop(L);
  if (lua_isnil(L, t)) {
    lua_pop(L, 1);
    return nullptr;
  }
  if (!lua_istable(L, t)) {
    args::raise(L, "%s: option 'thresholds' must be a table such as { ttft_p99_ms = 500, failure_rate = 0.01 }, got %s", fn,
                luaL_typename(L, t));
  }
  auto out = std::make_shared<Thresholds>();
  lua_pushnil(L);
  while (lua_next(L, t)) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      args::raise(L, "%s: option 'thresholds' takes names such as ttft_p99_ms as keys, got a %s key", fn, luaL_typename(L, -2));
    }
    const std::string name = lua_tostring(L, -2);
    if (lua_type(L, -1) != LUA_TNUMBER) {
      args::raise(L, "%s: threshold '%s' must be a number, got %s", fn, name.c_str(), luaL_typename(L, -1));
    }
    out->push_back(kit::value_or_raise(L, fn, parse_threshold(name, lua_tonumber(L, -1))));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  // Table order is not the script's order: sorted, so reports read the same every run.
  std::sort(out->begin(), out->end(), [](const Threshold& a, const Threshold& b) { return a.name < b.name; });
  return out->empty() ? nullptr : out;
}

}  // namespace runara

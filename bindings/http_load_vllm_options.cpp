#include "http_load_vllm_options.hpp"

#include <cmath>

#include "script/args.hpp"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace runara {

namespace {

const char* const kRun = "http_load.run";
constexpr int kMaxPercentiles = 16;

double ramp_rate(lua_State* L, int t, const char* field) {
  const auto v = args::opt_number(L, t, kRun, field);
  if (!v) args::raise(L, "%s: ramp.%s is required (requests per second, > 0)", kRun, field);
  if (!(*v > 0) || *v > 1e6) args::raise(L, "%s: ramp.%s must be a number > 0 and <= 1e6, got %g", kRun, field, *v);
  return *v;
}

// The list at options[field]: each item passed to `take` with its 1-based position.
template <typename Take>
void each_item(lua_State* L, const char* field, const char* example, Take take) {
  lua_getfield(L, 1, field);
  const int t = lua_gettop(L);
  if (!lua_isnil(L, t) && !lua_istable(L, t)) {
    args::raise(L, "%s: option '%s' must be a list such as %s, got %s", kRun, field, example, luaL_typename(L, t));
  }
  if (lua_istable(L, t)) {
    const int n = static_cast<int>(lua_objlen(L, t));
    if (n < 1 || n > kMaxPercentiles) args::raise(L, "%s: option '%s' must list 1 to %d items, got %d", kRun, field, kMaxPercentiles, n);
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, t, i);
      take(i);
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
}

}  // namespace

bool parse_ramp_option(lua_State* L, LoadSpec& base) {
  lua_getfield(L, 1, "ramp");
  const int t = lua_gettop(L);
  if (lua_isnil(L, t)) {
    lua_pop(L, 1);
    return false;
  }
  if (!lua_istable(L, t)) {
    args::raise(L, "%s: option 'ramp' must be a table such as { strategy = \"linear\", start_rate = 1, end_rate = 20 }, got %s",
                kRun, luaL_typename(L, t));
  }
  args::only_fields(L, t, "http_load.run: ramp", {"strategy", "start_rate", "end_rate"});
  const std::string strategy = args::opt_string(L, t, kRun, "strategy").value_or("");
  const auto ramp = parse_ramp(strategy);
  if (!ramp) args::raise(L, "%s: ramp.strategy must be \"linear\" or \"exponential\", got \"%s\"", kRun, strategy.c_str());
  base.ramp = *ramp;
  base.ramp_start = ramp_rate(L, t, "start_rate");
  base.ramp_end = ramp_rate(L, t, "end_rate");
  lua_pop(L, 1);
  return true;
}

void parse_percentiles_option(lua_State* L, LoadSpec& base) {
  each_item(L, "percentiles", "{ 25, 75, 99.5 }", [&](int i) {
    if (lua_type(L, -1) != LUA_TNUMBER) {
      args::raise(L, "%s: percentiles[%d] must be a number between 0 and 100, got %s", kRun, i, luaL_typename(L, -1));
    }
    const double q = lua_tonumber(L, -1);
    if (!(q > 0 && q < 100)) args::raise(L, "%s: percentiles[%d] must be between 0 and 100 (exclusive), got %g", kRun, i, q);
    base.percentiles.push_back(q);
  });
}

std::vector<std::string> parse_summary_metrics_option(lua_State* L) {
  std::vector<std::string> out;
  each_item(L, "summary_metrics", "{ \"ttft\", \"tpot\", \"itl\", \"e2el\" }", [&](int i) {
    const char* name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : nullptr;
    const std::string metric = name ? name : "";
    if (metric != "ttft" && metric != "tpot" && metric != "itl" && metric != "e2el") {
      args::raise(L, "%s: summary_metrics[%d] must be one of \"ttft\", \"tpot\", \"itl\", \"e2el\", got %s%s%s", kRun, i,
                  name ? "\"" : "", name ? name : luaL_typename(L, -1), name ? "\"" : "");
    }
    out.push_back(metric);
  });
  return out;
}

}  // namespace runara

// Lua <-> JSON conversion (runtime/script/values.*) on hostile values, without a runtime: a DAG of
// shared tables is charged for every copy JSON spells out and ends at the budget or at a stop
// request; JSON deeper than the limit is refused on its way into Lua. Errors are Lua errors.
#include <catch2/catch.hpp>

#include <string>

#include <lua.hpp>
#include <nlohmann/json.hpp>

#include "script/values.hpp"

namespace {

struct Lua {
  lua_State* L = luaL_newstate();
  Lua() { luaL_openlibs(L); }
  ~Lua() { lua_close(L); }
};

std::size_t g_budget = 0;
int g_stop_asked = 0;

int convert_with_budget(lua_State* L) {
  runara::to_json(L, 1, "value", g_budget);
  return 0;
}

int convert_until_stopped(lua_State* L) {
  runara::to_json(L, 1, "value", std::size_t(1) << 40, [] { return ++g_stop_asked >= 3; });
  return 0;
}

// Runs fn(value of `code`) protected; returns the error message ("" if none).
std::string call(Lua& lua, lua_CFunction fn, const std::string& code) {
  lua_pushcfunction(lua.L, fn);
  REQUIRE(luaL_dostring(lua.L, code.c_str()) == 0);
  const bool failed = lua_pcall(lua.L, 1, 0, 0) != 0;
  std::string message = failed ? lua_tostring(lua.L, -1) : "";
  if (failed) lua_pop(lua.L, 1);
  return message;
}

const char* kSharedDag =
    "local t = {leaf = true} "
    "for level = 1, 8 do local n = {} for i = 1, 200 do n[i] = t end t = n end "
    "return t";

}  // namespace

TEST_CASE("to_json: a shared-table DAG is charged per copy and refused at the budget", "[lua_json]") {
  Lua lua;
  g_budget = 1 << 20;  // 1 MiB: about 30,000 nodes, far from 200^8
  const std::string error = call(lua, convert_with_budget, kSharedDag);
  CHECK(error.find("value[1][1][1]") == 0);
  CHECK(error.find("is too large: writing it would exceed the memory limit") != std::string::npos);
  CHECK(lua_gettop(lua.L) == 0);
}

TEST_CASE("to_json: a stop request ends a long conversion", "[lua_json]") {
  Lua lua;
  g_stop_asked = 0;
  const std::string error = call(lua, convert_until_stopped, kSharedDag);
  CHECK(g_stop_asked == 3);
  CHECK(error.find("not written, the run is stopping") != std::string::npos);
}

TEST_CASE("push_json: JSON nested past the limit is refused, not recursed into", "[lua_json]") {
  Lua lua;
  nlohmann::json deep = 1;
  for (int i = 0; i < 150; ++i) deep = nlohmann::json::array({std::move(deep)});
  static nlohmann::json* g_deep = nullptr;
  g_deep = &deep;
  lua_pushcfunction(lua.L, [](lua_State* L) {
    runara::push_json(L, *g_deep);
    return 1;
  });
  REQUIRE(lua_pcall(lua.L, 0, 1, 0) != 0);
  CHECK(std::string(lua_tostring(lua.L, -1)) == "JSON nested deeper than 100 levels");
}

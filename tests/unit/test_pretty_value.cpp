// The REPL's pretty-printer (runtime/script/pretty.*, pretty_value) on hostile tables: a DAG of
// shared subtables (once 200^depth lines, then bad_alloc), cycles, deep nesting, wide tables and
// huge strings all print in bounded time and output, shared subtables once; a stop request ends
// the printing early.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include <lua.hpp>

#include "script/pretty.hpp"

namespace {

struct Lua {
  lua_State* L = luaL_newstate();
  Lua() { luaL_openlibs(L); }
  ~Lua() { lua_close(L); }
  // Runs `code` (which returns one value) and leaves the value on the stack.
  void eval(const std::string& code) {
    INFO(code);
    REQUIRE(luaL_dostring(L, code.c_str()) == 0);
  }
};

// width x depth, every slot of a level the same table: 200^8 paths, 8 distinct tables.
const char* kSharedDag =
    "local t = {leaf = true} "
    "for level = 1, 8 do local n = {} for i = 1, 200 do n[i] = t end t = n end "
    "return t";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("pretty_value: a shared-table DAG prints each subtable once, quickly", "[pretty_value]") {
  Lua lua;
  lua.eval(kSharedDag);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string out = runara::pretty_value(lua.L, -1);
  CHECK(seconds_since(t0) < 1.0);
  CHECK(out.size() <= runara::kPrettyMaxBytes + 100);
  CHECK(out.find("<shared table, shown above>") != std::string::npos);
  CHECK(lua_gettop(lua.L) == 1);
}

TEST_CASE("pretty_value: cycles, deep nesting, wide tables and long strings are bounded", "[pretty_value]") {
  Lua lua;
  lua.eval("local t = {name = 'x'} t.self = t return t");
  std::string out = runara::pretty_value(lua.L, -1);
  CHECK(out.find("self = <shared table, shown above>") != std::string::npos);
  CHECK(out.find("name = \"x\"") != std::string::npos);

  lua.eval("local t = {} for i = 1, 100000 do t = {t} end return t");
  out = runara::pretty_value(lua.L, -1);
  CHECK(out.find("{...}") != std::string::npos);
  CHECK(out.size() < 1000);

  lua.eval("local t = {} for i = 1, 1000000 do t[i] = i end return t");
  out = runara::pretty_value(lua.L, -1);
  CHECK(out.find("[200] = 200,") != std::string::npos);
  CHECK(out.find("[201]") == std::string::npos);
  CHECK(out.find("... (999800 more)") != std::string::npos);

  lua.eval("return string.rep('a', 10000000)");
  out = runara::pretty_value(lua.L, -1);
  CHECK(out.size() <= runara::kPrettyMaxBytes + 100);
  CHECK(out.find("... (output cut at 64 KiB)") != std::string::npos);
  CHECK(lua_gettop(lua.L) == 4);
}

TEST_CASE("pretty_value: a stop request ends the printing", "[pretty_value]") {
  Lua lua;
  lua.eval("local t = {} for i = 1, 150 do t[i] = {i, {i}} end return t");
  int asked = 0;
  const std::string out = runara::pretty_value(lua.L, -1, {[&] { return ++asked > 2; }, {}});
  CHECK(asked >= 3);
  CHECK(out.find("... (stopped)") != std::string::npos);
  CHECK(out.find("[150]") == std::string::npos);
}

TEST_CASE("pretty_value: a cut never shows the start of a secret", "[pretty_value]") {
  Lua lua;
  // The secret straddles the 64 KiB cut: it is masked before the cut, so not even "SEC" shows.
  lua.eval("return string.rep('a', 65536 - 4) .. 'SECRETVALUE' .. string.rep('b', 100)");
  const auto redact = [](std::string_view s) {
    std::string out(s);
    for (auto at = out.find("SECRETVALUE"); at != std::string::npos; at = out.find("SECRETVALUE"))
      out.replace(at, 11, "<secret S>");
    return out;
  };
  const std::string out = runara::pretty_value(lua.L, -1, {{}, redact});
  CHECK(out.find("SEC") == std::string::npos);
  CHECK(out.find("... (output cut at 64 KiB)") != std::string::npos);
}

TEST_CASE("pretty_value: a secret longer than the default margin straddling the cut is still masked", "[pretty_value]") {
  Lua lua;
  // A 10 KiB secret (a PEM key, say) starting just before the 64 KiB cut: with a fixed 4 KiB
  // margin the text read stops inside it, the redactor never sees it whole, and its start shows.
  lua.eval("return string.rep('a', 65536 - 8) .. 'K' .. string.rep('z', 10239) .. string.rep('b', 100)");
  const std::string secret = "K" + std::string(10239, 'z');
  const auto redact = [&secret](std::string_view s) {
    std::string out(s);
    for (auto at = out.find(secret); at != std::string::npos; at = out.find(secret)) out.replace(at, secret.size(), "<secret S>");
    return out;
  };
  runara::PrettyOptions options{{}, redact, secret.size()};
  const std::string out = runara::pretty_value(lua.L, -1, options);
  CHECK(out.find("Kzz") == std::string::npos);
  CHECK(out.find("... (output cut at 64 KiB)") != std::string::npos);
  // With the old fixed margin the start of the secret shows: the margin is what protects it.
  options.redact_margin = 4096;
  CHECK(runara::pretty_value(lua.L, -1, options).find("Kzz") != std::string::npos);
}

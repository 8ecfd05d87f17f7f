#include "compare_gate.hpp"

#include <sys/stat.h>

#include <string>

#include "base/files.hpp"
#include "base/json_limits.hpp"
#include "script/values.hpp"

namespace runara::cli {

namespace {

constexpr off_t kMaxResultsBytes = off_t{64} << 20;

int fail(lua_State* L, const std::string& why) {
  lua_pushnil(L);
  lua_pushlstring(L, why.data(), why.size());
  return 2;
}

int read_results(lua_State* L) {
  Context& ctx = Context::from(L);
  const std::string path = std::string(luaL_checkstring(L, 1)) + "/results.json";
  std::string error;
  const std::string real = ctx.readable_path(path, error);
  if (real.empty()) return fail(L, error);
  struct stat st{};
  if (::stat(real.c_str(), &st) != 0) return fail(L, "no results.json (the run wrote none, or it was deleted)");
  if (!S_ISREG(st.st_mode)) return fail(L, "results.json is not a file");
  if (st.st_size > kMaxResultsBytes) return fail(L, "results.json is larger than 64 MiB");
  std::string text;
  if (!read_file_text(real, text)) return fail(L, "results.json cannot be read");
  auto doc = parse_json_limited(text, error, kMaxJsonDepth, ctx.memory_budget()->left() / 2);
  if (!doc) return fail(L, "results.json is damaged: " + error);
  if (!doc->is_object()) return fail(L, "results.json is not a JSON object");
  push_json(L, *doc);
  return 1;
}

int crossed(lua_State* L) {
  std::size_t n = 0;
  const char* text = luaL_checklstring(L, 1, &n);
  Context::from(L).report_threshold_crossed(std::string(text, n));
  return 0;
}

class CompareGate : public Primitive {
 public:
  std::string name() const override { return "compare_gate"; }
  void open(lua_State* L, Context&) override {
    lua_newtable(L);
    lua_pushcfunction(L, read_results);
    lua_setfield(L, -2, "read_results");
    lua_pushcfunction(L, crossed);
    lua_setfield(L, -2, "crossed");
  }
};

}  // namespace

std::unique_ptr<Primitive> make_compare_gate() { return std::make_unique<CompareGate>(); }

}  // namespace runara::cli

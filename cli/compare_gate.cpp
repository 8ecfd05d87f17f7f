#include "compare_gate.hpp"

#include <string>

namespace runara::cli {

namespace {

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
    lua_pushcfunction(L, crossed);
    lua_setfield(L, -2, "crossed");
  }
};

}  // namespace

std::unique_ptr<Primitive> make_compare_gate() { return std::make_unique<CompareGate>(); }

}  // namespace runara::cli

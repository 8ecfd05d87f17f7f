// A host program embedding runara: its own primitive, its own permissions, events routed to
// its own log, and cancellation wired to nothing but a flag (a real host uses its signals).
#include <cstdio>
#include <memory>

#include <runara/primitive.hpp>
#include <runara/runtime.hpp>

// A primitive is a global table; this one has a single function: greeter.hello(name).
struct Greeter : runara::Primitive {
  std::string name() const override { return "greeter"; }
  void open(lua_State* L, runara::Context&) override {
    lua_newtable(L);
    lua_pushcfunction(L, [](lua_State* L) -> int {
      lua_pushfstring(L, "hello, %s", luaL_checkstring(L, 1));
      return 1;
    });
    lua_setfield(L, -2, "hello");
  }
};

int main() {
  runara::Options options;
  options.max_runtime_s = 10;  // the host decides the limits and permissions
  runara::Events events;
  events.print = [](std::string_view text) { std::printf("[script] %.*s", int(text.size()), text.data()); };
  events.result = [](std::string_view name, std::string_view json) {
    std::printf("[result] %.*s = %.*s\n", int(name.size()), name.data(), int(json.size()), json.data());
  };
  runara::Runtime runtime(options, events);
  runtime.add_primitive(std::make_unique<Greeter>());
  runara::Outcome outcome = runtime.run_string(R"(
    local t = runara.spawn(function() runara.sleep(0.05) return greeter.hello("embedder") end)
    print(t:join())
    runara.result("answer", 42)
  )", "=embedded");
  std::printf("exit %d %s\n", static_cast<int>(outcome.exit), outcome.message.c_str());
  return static_cast<int>(outcome.exit);
}

// A host program embedding runara: its own primitive, its own permissions, events routed to
// its own log, and cancellation wired to nothing but a flag (a real host uses its signals).
//
// The primitive, `greeter`, uses only the public Context (runara/primitive.hpp), as the built-in
// ones do: a secret the host knows (redacted wherever the run writes text), a function that
// waits on the run's event loop without blocking it, and a teardown that runs however the
// script ends.
#include <cstdio>
#include <memory>
#include <string>

#include <uv.h>

#include <runara/primitive.hpp>
#include <runara/runtime.hpp>

namespace {

// greeter.hello(name)              -> "hello, NAME" at once
// greeter.hello_later(name, secs)  -> the same after `secs`, the calling task waiting meanwhile
// greeter.signed(name)             -> "hello, NAME (key ...)": carries the host's key
struct Greeter : runara::Primitive {
  explicit Greeter(std::string key) : key_(std::move(key)) {}

  std::string name() const override { return "greeter"; }

  void open(lua_State* L, runara::Context& ctx) override {
    // From here on the run masks the key in print, logs and results.
    ctx.add_secret("GREETER_KEY", key_);
    lua_newtable(L);
    lua_pushcfunction(L, hello);
    lua_setfield(L, -2, "hello");
    ctx.push_async(L, hello_later);  // it waits: errors are raised at the caller's line
    lua_setfield(L, -2, "hello_later");
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, signed_hello, 1);
    lua_setfield(L, -2, "signed");
  }

  void teardown(runara::Context& ctx, std::function<void(std::string)> done) override {
    ctx.log("greeter: teardown after " + std::to_string(greeted_) + " greeting(s)");
    done("");
  }

 private:
  static int hello(lua_State* L) {
    lua_pushfstring(L, "hello, %s", luaL_checkstring(L, 1));
    return 1;
  }

  // One timer per call; its callback resumes the waiting task, or nothing if it was cancelled.
  struct Later {
    uv_timer_t timer;
    runara::Context* ctx;
    runara::WaitId wait;
    std::string text;
  };

  static void close_later(Later* l) {
    uv_close(reinterpret_cast<uv_handle_t*>(&l->timer), [](uv_handle_t* h) { delete static_cast<Later*>(h->data); });
  }

  static int hello_later(lua_State* L) {
    auto& ctx = runara::Context::from(L);
    const std::string text = std::string("hello, ") + luaL_checkstring(L, 1);  // arguments first
    const double seconds = luaL_checknumber(L, 2);
    // suspend may raise (a stopping run): own the allocation until it has returned.
    auto owned = std::make_unique<Later>(Later{{}, &ctx, 0, text});
    Later* later = owned.get();
    later->wait = ctx.suspend(L, [later] { close_later(later); });  // cancelled: no resume
    owned.release();  // the timer owns it from here
    uv_timer_init(ctx.loop(), &later->timer);
    later->timer.data = later;
    uv_timer_start(
        &later->timer,
        [](uv_timer_t* t) {
          auto* l = static_cast<Later*>(t->data);
          l->ctx->resume(l->wait, [text = l->text](lua_State* co) {
            lua_pushlstring(co, text.data(), text.size());
            return 1;
          });
          close_later(l);
        },
        static_cast<uint64_t>(seconds * 1000), 0);
    return ctx.yield(L);
  }

  static int signed_hello(lua_State* L) {
    auto* self = static_cast<Greeter*>(lua_touserdata(L, lua_upvalueindex(1)));
    ++self->greeted_;
    const std::string text = std::string("hello, ") + luaL_checkstring(L, 1) + " (key " + self->key_ + ")";
    lua_pushlstring(L, text.data(), text.size());
    return 1;
  }

  std::string key_;
  int greeted_ = 0;
};

}  // namespace

int main() {
  runara::Options options;
  options.max_runtime_s = 10;  // the host decides the limits and permissions
  runara::Events events;
  events.print = [](std::string_view text) { std::printf("[script] %.*s", int(text.size()), text.data()); };
  events.log = [](std::string_view line) { std::printf("[log] %.*s\n", int(line.size()), line.data()); };
  events.result = [](std::string_view name, std::string_view json) {
    std::printf("[result] %.*s = %.*s\n", int(name.size()), name.data(), int(json.size()), json.data());
  };
  runara::Runtime runtime(options, events);
  runtime.add_primitive(std::make_unique<Greeter>("k-3f9a61c2e7"));
  runara::Outcome outcome = runtime.run_string(R"(
    local t = runara.spawn(function() return greeter.hello_later("embedder", 0.05) end)
    print(greeter.hello("host"))
    print(t:join())
    print(greeter.signed("reader"))
    runara.result("answer", 42)
  )", "=embedded");
  std::printf("exit %d %s\n", static_cast<int>(outcome.exit), outcome.message.c_str());
  return static_cast<int>(outcome.exit);
}

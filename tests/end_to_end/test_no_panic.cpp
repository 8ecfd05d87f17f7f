// No LuaJIT panic at the memory cap (issue 25, "No panic"): values the runtime pushes for a
// script from the event loop (a wait's results, a failed task's message, a finished task's
// results, an at_exit function's ending) do not fit under --max-memory. Each such push must end
// the run the way a script that hits the cap in plain Lua ends it: the memory-limit message,
// exit status 1, results.json with its run record, teardown; never LuaJIT's panic handler, which
// exits the process with status 1 and nothing else. (The sandbox corpus has the same attempts as
// scripts: tests/sandbox/memory_push_*.lua.)
#include <catch2/catch.hpp>

#include <uv.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "runara/primitive.hpp"
#include "runara/runtime.hpp"
#include "test_text.hpp"

namespace {

using runara::test::contains;

constexpr std::size_t kMiB = 1u << 20;

// blob.get(n) / blob.get_raw(n): wait for the loop, then return a new string of n bytes. get is
// registered with Context::push_async (as every built-in primitive is); get_raw is a bare
// lua_CFunction, as a host's primitive may be: its values are pushed from the loop itself.
struct Blob : runara::Primitive {
  struct Pending {
    runara::Context* ctx;
    runara::WaitId wait;
    std::size_t bytes;
  };

  static int get(lua_State* L) {
    const auto bytes = static_cast<std::size_t>(luaL_checknumber(L, 1));
    auto& ctx = runara::Context::from(L);
    auto* timer = new uv_timer_t;
    timer->data = new Pending{&ctx, ctx.suspend(L, {}), bytes};
    uv_timer_init(ctx.loop(), timer);
    uv_timer_start(timer, [](uv_timer_t* t) {
      std::unique_ptr<Pending> p(static_cast<Pending*>(t->data));
      const std::size_t n = p->bytes;
      p->ctx->resume(p->wait, [n](lua_State* co) {
        const std::string blob = "blob:" + std::string(n - 5, 'b');  // equal to nothing in the heap
        lua_pushlstring(co, blob.data(), blob.size());
        return 1;
      });
      uv_close(reinterpret_cast<uv_handle_t*>(t), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    }, 1, 0);
    return ctx.yield(L);
  }

  std::string name() const override { return "blob"; }
  void open(lua_State* L, runara::Context& ctx) override {
    lua_newtable(L);
    ctx.push_async(L, get);
    lua_setfield(L, -2, "get");
    lua_pushcfunction(L, get);
    lua_setfield(L, -2, "get_raw");
  }
};

struct Ended {
  runara::Outcome outcome;
  std::string printed, logged;
  nlohmann::json results;  // results.json, null if none
};

// Fills the heap of a 64 MiB run to 60 MiB, then calls `call`.
Ended run_near_cap(const std::string& call) {
  const std::string dir = runara::test::temp_dir("no-panic");
  const std::string path = runara::test::write_temp_file(dir, "near_cap.lua", R"(
local keep, i = {}, 0
for k = 1, 8000 do keep[k] = false end  -- no table growth while filling
while collectgarbage("count") < 60 * 1024 do
  i = i + 1
  keep[i] = string.rep(tostring(i), 2048)
end
local s = )" + call + R"(
print("ESCAPED: got " .. #s .. " bytes at " .. math.floor(collectgarbage("count") / 1024) .. " MiB")
)");
  runara::Options o;
  o.out_dir = dir + "/out";
  o.max_runtime_s = 60;
  o.max_memory_bytes = 64 * kMiB;
  Ended e;
  runara::Events events;
  events.print = [&e](std::string_view t) { e.printed += t; };
  events.log = [&e](std::string_view t) { e.logged += std::string(t) + "\n"; };
  {
    runara::Runtime rt(o, events);
    rt.add_primitive(std::make_unique<Blob>());
    e.outcome = rt.run_file(path);
  }
  std::ifstream in(e.outcome.out_dir + "/results.json");
  if (in) e.results = nlohmann::json::parse(in, nullptr, false);
  return e;
}

void check_memory_ending(const Ended& e) {
  INFO("message: " << e.outcome.message << "\nprinted: " << e.printed << "\nlogged: " << e.logged);
  CHECK_FALSE(contains(e.printed, "ESCAPED"));
  CHECK(e.outcome.exit == runara::Exit::script_error);
  CHECK(e.outcome.message == "stopped: the script used more than its memory limit of 64 MiB (raise it with --max-memory)");
  REQUIRE(e.results.is_object());
  REQUIRE(e.results.contains("run"));
  CHECK(e.results["run"]["exit_code"] == 1);
  CHECK(e.results["run"]["status"] == "failed");
  CHECK(contains(e.results["run"]["error"].get<std::string>(), "memory limit of 64 MiB"));
}

}  // namespace

TEST_CASE("a wait's values that do not fit under --max-memory end the run at the memory limit, not in a LuaJIT panic", "[no_panic]") {
  // Within the 32 MiB kept beyond the cap for unwinding, and past it: the runtime must not
  // depend on the reserve being enough.
  SECTION("through push_async, 8 MiB") { check_memory_ending(run_near_cap("blob.get(8 * 1024 * 1024)")); }
  SECTION("through push_async, 48 MiB") { check_memory_ending(run_near_cap("blob.get(48 * 1024 * 1024)")); }
  SECTION("a bare C function, 8 MiB") { check_memory_ending(run_near_cap("blob.get_raw(8 * 1024 * 1024)")); }
  SECTION("a bare C function, 48 MiB") { check_memory_ending(run_near_cap("blob.get_raw(48 * 1024 * 1024)")); }
}

TEST_CASE("a wait's values that fit are still returned near the cap, from both kinds of wait", "[no_panic]") {
  for (const char* call : {"blob.get(1024)", "blob.get_raw(1024)"}) {
    const Ended e = run_near_cap(call);
    INFO(call << ": " << e.outcome.message << "\n" << e.logged);
    CHECK(e.outcome.exit == runara::Exit::ok);
    CHECK(contains(e.printed, "ESCAPED: got 1024 bytes at 60 MiB"));
  }
}

TEST_CASE("runara plan of a script that hits the cap in a wait's values prints its plan and removes its folder", "[no_panic][sim]") {
  // The sandbox attempt, after a log line: the plan's folder (TMPDIR/runara-plan-PID-XXXXXX) exists
  // when the cap is hit.
  const std::string tmp = runara::test::temp_dir("no-panic-plan");
  std::ifstream attempt(std::string(RUNARA_SOURCE_DIR) + "/tests/sandbox/memory_push_join_error.lua");
  std::stringstream code;
  code << "runara.log('filling the heap')\n" << attempt.rdbuf();
  const std::string script = runara::test::write_temp_file(runara::test::temp_dir("no-panic-plan-script"), "join.lua", code.str());
  runara::test::ChildProcess child({RUNARA_BINARY, "plan", "--max-memory", "64M", script}, {{"TMPDIR", tmp}});
  const runara::test::ChildResult r = child.wait(60);
  INFO(r.out << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "Plan for "));
  CHECK(contains(r.out, "until: stopped: the script used more than its memory limit of 64 MiB"));
  CHECK(contains(r.out, "It creates no machine."));
  CHECK_FALSE(contains(r.out + r.err, "ESCAPED"));
  CHECK_FALSE(std::filesystem::exists(tmp + "/runara-plan-" + std::to_string(child.pid())));
  CHECK(std::filesystem::is_empty(tmp));  // nor the simulated cloud's folder
}

// Tasks: runara.spawn / task:join / task:cancel / task:status, how the scheduler orders them,
// what happens to failing and unfinished tasks, coroutines inside tasks, and deadlocks.
// Tested through the embedding API (a Runtime with captured events); the binary's exit status
// for a run whose task failed unobserved: tests/end_to_end/test_run_record.cpp.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "runara/primitive.hpp"
#include "runara/runtime.hpp"
#include "test_text.hpp"

using runara::Exit;

using runara::test::contains;
using runara::test::now_s;

namespace {



struct Captured {
  std::string printed, logged;
  runara::Events events() {
    runara::Events e;
    e.print = [this](std::string_view t) { printed += t; };
    e.log = [this](std::string_view t) { logged += std::string(t) + "\n"; };
    return e;
  }
};

runara::Options options_for(const std::string& tag) {
  runara::Options o;
  o.out_dir = runara::test::temp_dir(tag) + "/out";
  o.max_runtime_s = 60;  // a hung test fails instead of hanging
  return o;
}

struct Run {
  runara::Outcome outcome;
  std::string printed, logged;
  double seconds = 0;
};

Run run_code(const std::string& code, const std::string& tag = "tasks") {
  Captured c;
  runara::Runtime rt(options_for(tag), c.events());
  const double start = now_s();
  Run r;
  r.outcome = rt.run_string(code);
  r.seconds = now_s() - start;
  r.printed = c.printed;
  r.logged = c.logged;
  return r;
}

// Runs `code` as the script file NAME (so error locations read "NAME:LINE:").
Run run_script(const std::string& name, const std::string& code,
               std::vector<std::unique_ptr<runara::Primitive>> primitives = {}) {
  const std::string dir = runara::test::temp_dir("tasks-script");
  const std::string path = runara::test::write_temp_file(dir, name, code);
  Captured c;
  runara::Options o;
  o.out_dir = dir + "/out";
  o.max_runtime_s = 60;
  runara::Runtime rt(o, c.events());
  for (auto& p : primitives) rt.add_primitive(std::move(p));
  const double start = now_s();
  Run r;
  r.outcome = rt.run_file(path);
  r.seconds = now_s() - start;
  r.printed = c.printed;
  r.logged = c.logged;
  return r;
}

// `gate.wait()` blocks the calling task until the script calls `gate.open()`: a wait that only
// the script itself (here: the main chunk) can end.
struct Gate : runara::Primitive {
  struct State {
    std::vector<runara::WaitId> waiting;
  };
  std::shared_ptr<State> state = std::make_shared<State>();

  std::string name() const override { return "gate"; }
  void open(lua_State* L, runara::Context& ctx) override {
    lua_newtable(L);
    lua_pushlightuserdata(L, state.get());
    ctx.push_async(L, [](lua_State* L) -> int {
      auto* st = static_cast<State*>(lua_touserdata(L, lua_upvalueindex(1)));
      auto& c = runara::Context::from(L);
      st->waiting.push_back(c.suspend(L, {}));
      return c.yield(L);
    }, 1);
    lua_setfield(L, -2, "wait");
    lua_pushlightuserdata(L, state.get());
    lua_pushcclosure(L, [](lua_State* L) -> int {
      auto* st = static_cast<State*>(lua_touserdata(L, lua_upvalueindex(1)));
      auto& c = runara::Context::from(L);
      for (runara::WaitId w : st->waiting) c.resume(w, [](lua_State*) { return 0; });
      st->waiting.clear();
      return 0;
    }, 1);
    lua_setfield(L, -2, "open");
  }
};

}  // namespace

TEST_CASE("spawned tasks run after the spawner yields, in spawn order", "[tasks]") {
  auto r = run_code(R"(
    local order = {}
    local tasks = {}
    for i = 1, 3 do
      tasks[i] = runara.spawn(function() order[#order + 1] = "task" .. i end)
    end
    order[#order + 1] = "main"
    for i = 1, 3 do tasks[i]:join() end
    print(table.concat(order, ","))
  )");
  CHECK(r.outcome.exit == Exit::ok);
  CHECK(r.outcome.message == "");
  CHECK(r.printed == "main,task1,task2,task3\n");
}

TEST_CASE("tasks finish in the order their waits end and join returns each task's results", "[tasks]") {
  auto r = run_code(R"(
    local finished = {}
    local function worker(name, seconds)
      runara.sleep(seconds)
      finished[#finished + 1] = name
      return name, seconds * 10
    end
    local slow = runara.spawn(worker, "slow", 0.3)
    local fast = runara.spawn(worker, "fast", 0.05)
    local mid = runara.spawn(worker, "mid", 0.15)
    -- joined in spawn order, but they ran concurrently
    local a, b = slow:join()
    local c, d = fast:join()
    local e, f = mid:join()
    print(a, b, c, d, e, f)
    print(table.concat(finished, ","))
    -- joining a finished task again gives the same results
    print(fast:join())
  )");
  CHECK(r.outcome.exit == Exit::ok);
  CHECK(r.printed == "slow\t3\tfast\t0.5\tmid\t1.5\nfast,mid,slow\nfast\t0.5\n");
  CHECK(r.seconds < 5);  // concurrent: about 0.3 s, not 0.5 s; generous for a loaded machine
}

TEST_CASE("join keeps every result, including nil holes and trailing nils", "[tasks]") {
  auto r = run_code(R"(
    local t = runara.spawn(function(x, y)
      runara.sleep(0.01)
      return nil, x, nil, y, nil
    end, "a", "b")
    print(select("#", t:join()), t:join())
    local quick = runara.spawn(function(...) return ... end, 1, nil, 3)  -- never waits
    print(select("#", quick:join()), quick:join())
  )");
  CHECK(r.outcome.exit == Exit::ok);
  CHECK(r.printed == "5\tnil\ta\tnil\tb\tnil\n3\t1\tnil\t3\n");
}

TEST_CASE("joining a task that returned nothing gives no values", "[tasks]") {
  auto r = run_code(R"(
    local instant = runara.spawn(function() end)
    local waited = runara.spawn(function() runara.sleep(0.01) end)
    runara.sleep(0.05)  -- both are done: join takes its no-wait path
    print(select("#", instant:join()), select("#", waited:join()))
    local late = runara.spawn(function() runara.sleep(0.05) end)
    print(select("#", late:join()))  -- joined while still running: the waiting path
  )");
  CHECK(r.outcome.exit == Exit::ok);
  CHECK(r.printed == "0\t0\n0\n");
}

TEST_CASE("join re-raises the task's error with its original file:line", "[tasks]") {
  SECTION("caught by pcall: the run goes on and the error is not reported again") {
    auto r = run_script("join_error.lua",
                        "local t = runara.spawn(function()\n"
                        "  runara.sleep(0.01)\n"
                        "  error('disk on fire')\n"
                        "end)\n"
                        "local ok, err = pcall(t.join, t)\n"
                        "print(ok, err)\n"
                        "local ok2, err2 = pcall(t.join, t)  -- joining again re-raises again\n"
                        "print(ok2, err2)\n"
                        "local t2 = runara.spawn(function() error({message = 'table error'}) end)\n"
                        "print(pcall(t2.join, t2))\n");
    CHECK(r.outcome.exit == Exit::ok);
    CHECK(r.outcome.message == "");
    // both joins raise the same message; the script is named by its path, so match its tail
    const std::string line = "join_error.lua:3: disk on fire\n";
    const auto first = r.printed.find(line);
    REQUIRE(first != std::string::npos);
    CHECK(r.printed.find(line, first + line.size()) != std::string::npos);
    CHECK(r.printed.rfind("false\t", 0) == 0);
    CHECK(contains(r.printed, "table error"));
    CHECK_FALSE(contains(r.logged, "never joined"));
    CHECK_FALSE(contains(r.logged, "disk on fire"));
  }
  SECTION("not caught: the run fails with the task's message") {
    auto r = run_script("join_uncaught.lua",
                        "local t = runara.spawn(function()\n"
                        "  error('no route to host')\n"
                        "end)\n"
                        "t:join()\n"
                        "print('not reached')\n");
    CHECK(r.outcome.exit == Exit::script_error);
    CHECK(contains(r.outcome.message, "join_uncaught.lua:2: no route to host"));
    CHECK_FALSE(contains(r.printed, "not reached"));
  }
}

TEST_CASE("joining a cancelled task raises an error saying it was cancelled", "[tasks]") {
  auto r = run_code(R"(
    -- cancelled before the join
    local t = runara.spawn(function() runara.sleep(30) end)
    runara.sleep(0)
    t:cancel()
    local ok, err = pcall(t.join, t)
    print("before", ok, err)
    -- cancelled while another task is blocked joining it
    local victim = runara.spawn(function() runara.sleep(30) end)
    local joiner = runara.spawn(function() return pcall(victim.join, victim) end)
    runara.sleep(0.02)
    print(joiner:status(), victim:status())
    victim:cancel()
    local jok, jerr = joiner:join()
    print("while", jok, jerr)
  )");
  CHECK(r.outcome.exit == Exit::ok);
  INFO(r.printed);
  CHECK(contains(r.printed, "before\tfalse\t"));
  CHECK(contains(r.printed, "waiting\twaiting\n"));
  CHECK(contains(r.printed, "while\tfalse\t"));
  // both messages say which task and that it was cancelled
  CHECK(contains(r.printed, "task 2 was cancelled"));
  CHECK(contains(r.printed, "task 3 was cancelled"));
  CHECK(r.seconds < 10);  // nobody waited for the 30 s sleeps
}

TEST_CASE("task:cancel stops a task where it waits and task:status reports each state", "[tasks]") {
  auto r = run_code(R"(
    local reached = false
    local t = runara.spawn(function()
      runara.sleep(0.2)
      reached = true
    end)
    local states = { t:status() }          -- spawned, not started yet
    runara.sleep(0)
    states[#states + 1] = t:status()       -- now sleeping
    t:cancel()
    states[#states + 1] = t:status()
    t:cancel()                             -- cancelling twice is harmless
    runara.sleep(0.4)                      -- past the point the task would have reached
    print(table.concat(states, ","), reached)

    local done = runara.spawn(function() return 1 end)
    done:join()
    local failed = runara.spawn(function() error("x") end)
    runara.sleep(0)
    print(done:status(), failed:status(), pcall(failed.join, failed))
    done:cancel()                           -- cancelling a finished task changes nothing
    print(done:status(), done:join())
    print(tostring(t), type(t.id))
    print(pcall(function() local me; me = runara.spawn(function() me:cancel() end); return me:join() end))
  )");
  INFO(r.printed);
  CHECK(r.outcome.exit == Exit::ok);
  CHECK(contains(r.printed, "ready,waiting,cancelled\tfalse\n"));
  CHECK(contains(r.printed, "done\tfailed\tfalse\t"));
  CHECK(contains(r.printed, "done\t1\n"));
  CHECK(contains(r.printed, "(cancelled)\tnumber\n"));
  CHECK(contains(r.printed, "cannot cancel itself"));
}

TEST_CASE("an unjoined failing task is reported at exit and fails the run", "[tasks]") {
  auto r = run_script("unjoined.lua",
                      "runara.spawn(function()\n"
                      "  runara.sleep(0.01)\n"
                      "  error('lost connection')\n"
                      "end)\n"
                      "runara.sleep(0.1)\n"
                      "print('main done')\n");
  CHECK(r.printed == "main done\n");
  CHECK(r.outcome.exit == Exit::script_error);
  CHECK(contains(r.outcome.message, "never joined"));
  CHECK(contains(r.outcome.message, "unjoined.lua:3: lost connection"));
  CHECK(contains(r.logged, "unjoined.lua:3: lost connection"));
  CHECK(contains(r.logged, "unjoined.lua:1)"));
}

TEST_CASE("tasks still running when the main chunk ends are cancelled and logged", "[tasks]") {
  auto r = run_script("leftover.lua",
                      "local finished = false\n"
                      "runara.spawn(function() runara.sleep(30); finished = true end)\n"
                      "runara.spawn(function() runara.sleep(30) end)\n"
                      "runara.spawn(function() return 1 end)  -- finishes: not reported\n"
                      "runara.sleep(0.01)\n"
                      "print('end of main')\n");
  CHECK(r.outcome.exit == Exit::ok);
  CHECK(r.printed == "end of main\n");
  INFO(r.logged);
  CHECK(contains(r.logged, "cancelling 2 unfinished task(s)"));
  CHECK(contains(r.logged, "leftover.lua:2)"));
  CHECK(contains(r.logged, "leftover.lua:3)"));
  CHECK_FALSE(contains(r.logged, "leftover.lua:4"));
  CHECK(r.seconds < 10);  // the 30 s sleeps were cut short
}

TEST_CASE("10,000 concurrent tasks sleeping 0.5 s finish together with all their results", "[tasks]") {
  auto r = run_code(R"(
    local tasks = {}
    for i = 1, 10000 do
      tasks[i] = runara.spawn(function(n) runara.sleep(0.5) return n, n * 2 end, i)
    end
    local sum, doubled, count = 0, 0, 0
    for i = 1, #tasks do
      local n, d = tasks[i]:join()
      if n == i and d == 2 * i then count = count + 1 end
      sum, doubled = sum + n, doubled + d
    end
    print(count, sum, doubled)
  )");
  CHECK(r.outcome.exit == Exit::ok);
  CHECK(r.outcome.message == "");
  CHECK(r.printed == "10000\t50005000\t100010000\n");
  CHECK(r.seconds >= 0.5);
  CHECK(r.seconds < 3);
}

TEST_CASE("a bare coroutine.yield() in a task lets the other tasks run", "[tasks]") {
  auto r = run_code(R"(
    local order = {}
    local function worker(name)
      for i = 1, 3 do
        order[#order + 1] = name .. i
        local extra = coroutine.yield("ignored")   -- resumes with nothing
        assert(extra == nil)
      end
      return name
    end
    local a = runara.spawn(worker, "a")
    local b = runara.spawn(worker, "b")
    print(a:join(), b:join())
    print(table.concat(order, ","))
    -- the main chunk may yield too
    coroutine.yield()
    print("main resumed")
  )");
  CHECK(r.outcome.exit == Exit::ok);
  CHECK(r.printed == "a\tb\na1,b1,a2,b2,a3,b3\nmain resumed\n");
}

TEST_CASE("waiting inside coroutine.create/wrap is a clear error", "[tasks]") {
  auto r = run_code(R"(
    local co = coroutine.create(function() runara.sleep(0.01) return "slept" end)
    print(coroutine.resume(co))
    local wrapped = coroutine.wrap(function() local t = runara.spawn(function() end) t:join() end)
    print(pcall(wrapped))
    -- plain coroutines that do not wait still work inside tasks
    local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end)
    print(gen(), gen(), gen())
  )");
  INFO(r.printed);
  CHECK(r.outcome.exit == Exit::ok);
  CHECK(contains(r.printed, "false\t"));
  CHECK(contains(r.printed, "cannot wait inside a coroutine made with coroutine.create/wrap"));
  CHECK(contains(r.printed, "runara.spawn"));
  CHECK(contains(r.printed, "1\t2\t3\n"));
  CHECK_FALSE(contains(r.printed, "slept"));
}

TEST_CASE("coroutine.resume on a task's coroutine is refused", "[tasks]") {
  auto r = run_code(R"(
    local co
    local t = runara.spawn(function()
      co = coroutine.running()
      runara.sleep(0.05)
      return "finished normally"
    end)
    runara.sleep(0.01)
    print(type(co), pcall(coroutine.resume, co))
    print(t:join())
    print(pcall(coroutine.resume, coroutine.running()))  -- the main chunk is a task too
  )");
  INFO(r.printed);
  CHECK(r.outcome.exit == Exit::ok);
  CHECK(contains(r.printed, "thread\tfalse\tcoroutine.resume: this coroutine is a runara task"));
  CHECK(contains(r.printed, "finished normally\n"));
  CHECK(contains(r.printed, "\nfalse\tcoroutine.resume: this coroutine is a runara task"));
}

TEST_CASE("a deadlock ends the run with an error instead of hanging", "[tasks]") {
  SECTION("the main chunk joins a task that waits on the main chunk") {
    std::vector<std::unique_ptr<runara::Primitive>> prims;
    prims.push_back(std::make_unique<Gate>());
    auto r = run_script("deadlock.lua",
                        "local t = runara.spawn(function() gate.wait() return 'through' end)\n"
                        "print(t:join())  -- main would open the gate after this: never\n"
                        "gate.open()\n",
                        std::move(prims));
    CHECK(r.outcome.exit == Exit::script_error);
    CHECK(contains(r.outcome.message, "deadlock"));
    CHECK(r.printed == "");
    CHECK(r.seconds < 10);
  }
  SECTION("control: the same tasks without the deadlock") {
    std::vector<std::unique_ptr<runara::Primitive>> prims;
    prims.push_back(std::make_unique<Gate>());
    auto r = run_script("no_deadlock.lua",
                        "local t = runara.spawn(function() gate.wait() return 'through' end)\n"
                        "runara.sleep(0.01)\n"
                        "gate.open()\n"
                        "print(t:join())\n",
                        std::move(prims));
    CHECK(r.outcome.exit == Exit::ok);
    CHECK(r.printed == "through\n");
  }
  SECTION("two tasks joining each other") {
    auto r = run_script("cycle.lua",
                        "local a, b\n"
                        "a = runara.spawn(function() runara.sleep(0.01) return b:join() end)\n"
                        "b = runara.spawn(function() runara.sleep(0.01) return a:join() end)\n"
                        "a:join()\n");
    CHECK(r.outcome.exit == Exit::script_error);
    CHECK(contains(r.outcome.message, "deadlock"));
    CHECK(r.seconds < 10);
  }
}

// The library as a host sees it: events, results, cancel(), and two runtimes side by side.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

#include "runara/primitive.hpp"
#include "runara/runtime.hpp"

using runara::Exit;

namespace {
struct Captured {
  std::string printed, logged;
  std::vector<std::pair<std::string, std::string>> results;
  runara::Events events() {
    runara::Events e;
    e.print = [this](std::string_view t) { printed += t; };
    e.log = [this](std::string_view t) { logged += std::string(t) + "\n"; };
    e.result = [this](std::string_view n, std::string_view j) { results.emplace_back(n, j); };
    return e;
  }
};

runara::Options quiet_options() {
  runara::Options o;
  o.out_dir = "/tmp/runara-test-embedding-out";
  return o;
}
}  // namespace

TEST_CASE("a host receives print, log and result events", "[embed]") {
  Captured c;
  runara::Runtime rt(quiet_options(), c.events());
  auto out = rt.run_string("print('a', 1) runara.log('hello') runara.result('x', {1, 2})");
  CHECK(out.exit == Exit::ok);
  CHECK(c.printed == "a\t1\n");
  CHECK(c.logged.find("hello") != std::string::npos);
  REQUIRE(c.results.size() == 2);
  CHECK(c.results[0].first == "x");
  CHECK(c.results[0].second == "[1,2]");
  // The run record comes last, once the run has ended.
  CHECK(c.results[1].first == "run");
  const auto record = nlohmann::json::parse(c.results[1].second, nullptr, false);
  REQUIRE(record.is_object());
  CHECK(record["status"] == "ok");
  CHECK(record["exit_code"] == 0);
}

TEST_CASE("cancel() from another thread stops a busy script and a waiting one", "[embed]") {
  for (const char* code : {"while true do end", "runara.sleep(60)"}) {
    Captured c;
    runara::Runtime rt(quiet_options(), c.events());
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      rt.cancel();
    });
    auto out = rt.run_string(code);
    canceller.join();
    CHECK(out.exit == Exit::terminated);
    CHECK(out.message.find("cancelled") != std::string::npos);
  }
}

TEST_CASE("two runtimes in one process do not interfere", "[embed]") {
  Captured a, b;
  runara::Options slow = quiet_options();
  slow.max_runtime_s = 0.5;
  runara::Runtime first(slow, a.events());
  runara::Runtime second(quiet_options(), b.events());
  runara::Outcome first_out, second_out;
  std::thread t([&] { first_out = first.run_string("x = 1 while true do end"); });
  second_out = second.run_string("runara.sleep(0.8) print(x == nil, runara.run_id ~= nil)");
  t.join();
  CHECK(first_out.exit == Exit::watchdog);   // its watchdog did not touch the other runtime
  CHECK(second_out.exit == Exit::ok);
  CHECK(b.printed == "true\ttrue\n");       // no globals shared
  CHECK(first.run_id() != second.run_id());
}

TEST_CASE("a script's error object with a hostile __tostring cannot hang error reporting", "[embed]") {
  Captured c;
  runara::Runtime rt(quiet_options(), c.events());
  auto out = rt.run_string(
      "error(setmetatable({}, {__tostring = function() while true do end end}))");
  CHECK(out.exit == Exit::script_error);
  CHECK(out.message.find("error object") != std::string::npos);
}

TEST_CASE("eval keeps state between inputs and reports incomplete input", "[embed]") {
  Captured c;
  runara::Runtime rt(quiet_options(), c.events());
  CHECK(rt.eval("x = 40").kind == runara::EvalResult::Kind::ok);
  auto r = rt.eval("x + 2");
  CHECK(r.kind == runara::EvalResult::Kind::ok);
  CHECK(r.text == "42");
  CHECK(rt.eval("function f()").kind == runara::EvalResult::Kind::incomplete);
  auto completions = rt.complete("runara.sl");
  REQUIRE(completions.size() == 1);
  CHECK(completions[0] == "runara.sleep");
  CHECK(rt.finish().exit == Exit::ok);
}

TEST_CASE("require loads stdlib modules such as stats", "[embed]") {
  Captured c;
  runara::Runtime rt(quiet_options(), c.events());
  auto out = rt.run_string(
      "local stats = require 'stats' local s = stats.summary({4, 1, 3, 2}) "
      "print(s.n, s.mean, s.min, s.max, s.p50, stats.percentile({10, 20}, 90)) "
      "print(pcall(stats.mean, {1, 'x'}))");
  CHECK(out.exit == Exit::ok);
  CHECK(c.printed.find("4\t2.5\t1\t4\t2.5\t19\n") == 0);
  CHECK(c.printed.find("item 2 is string, expected a number") != std::string::npos);
}

TEST_CASE("a Runtime runs once: a second run is refused, not crashed", "[embed]") {
  Captured c;
  runara::Runtime rt(quiet_options(), c.events());
  CHECK(rt.run_string("print(1)").exit == Exit::ok);
  auto again = rt.run_string("print(2)");
  CHECK(again.exit == Exit::usage);
  CHECK(again.message.find("create a new Runtime") != std::string::npos);
}

namespace {
// A host's primitive that adds `hello` to the http_load table (Primitive::adds_to_existing).
struct HttpLoadHello : runara::Primitive {
  std::string name() const override { return "http_load"; }
  bool adds_to_existing() const override { return true; }
  void open(lua_State* L, runara::Context&) override {
    lua_newtable(L);
    lua_pushcfunction(L, [](lua_State* L) -> int {
      lua_pushliteral(L, "hello");
      return 1;
    });
    lua_setfield(L, -2, "hello");
  }
};
}  // namespace

TEST_CASE("a runtime without the built-in primitives has only runara, watchdog and the host's own", "[embed]") {
  Captured c;
  runara::Runtime rt(quiet_options(), c.events(), runara::Runtime::without_builtins);
  auto out = rt.run_string(
      "print(type(runara), type(watchdog), type(droplet), type(ssh), type(http_load), type(gpu_metrics), type(metrics))");
  CHECK(out.exit == Exit::ok);
  CHECK(c.printed == "table\ttable\tnil\tnil\tnil\tnil\tnil\n");
}

TEST_CASE("a primitive that adds to an existing table keeps the table's own functions", "[embed]") {
  {
    Captured c;
    runara::Runtime rt(quiet_options(), c.events());
    rt.add_primitive(std::make_unique<HttpLoadHello>());
    auto out = rt.run_string("print(type(http_load.run), http_load.hello())");
    CHECK(out.exit == Exit::ok);
    CHECK(c.printed == "function\thello\n");
  }
  {  // where no primitive opened the table, it becomes the global
    Captured c;
    runara::Runtime rt(quiet_options(), c.events(), runara::Runtime::without_builtins);
    rt.add_primitive(std::make_unique<HttpLoadHello>());
    auto out = rt.run_string("print(type(http_load.run), http_load.hello())");
    CHECK(out.exit == Exit::ok);
    CHECK(c.printed == "nil\thello\n");
  }
}

TEST_CASE("an argument error of a primitive the stdlib calls carries the script's line", "[embed]") {
  // A module of the stdlib's calls runara.sleep with the script's bad value: the error names the
  // script's line 2, not the module's (as the stdlib's own errors do: stdlib/runara/errors.lua).
  const std::string lib = "/tmp/runara-test-embedding-stdlib";
  std::filesystem::create_directories(lib);
  std::ofstream(lib + "/napper.lua") << "local M = {}\nfunction M.nap(s)\n  runara.sleep(s)\n  return true\nend\nreturn M\n";
  runara::Options o = quiet_options();
  o.stdlib_dir = lib;
  Captured c;
  runara::Runtime rt(o, c.events());
  auto out = rt.run_string("local napper = require('napper')\nnapper.nap(-1)\n");
  CHECK(out.exit == Exit::script_error);
  CHECK(out.message.find("(command line):2: runara.sleep: argument #1") != std::string::npos);
  // A task the stdlib spawns for the script is the script's too: a C function spawned directly
  // fails with the spawn's file:line, and that is the script's.
  std::ofstream(lib + "/napper.lua") << "local M = {}\nfunction M.nap(s)\n  return runara.spawn(runara.sleep, s)\nend\nreturn M\n";
  Captured c2;
  runara::Runtime rt2(o, c2.events());
  auto out2 = rt2.run_string("local napper = require('napper')\nlocal t = napper.nap(-1)\nprint(select(2, pcall(t.join, t)))\n");
  INFO(c2.printed << out2.message);
  CHECK(c2.printed.find("(command line):2: runara.sleep: argument #1") != std::string::npos);
  std::filesystem::remove_all(lib);
}

// The library as a host sees it: events, results, cancel(), and two runtimes side by side.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <thread>

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

// The run record (runtime/run/record.*): results.json's `run` section and run.log's last lines,
// written on every ending (ok, failed, watchdog, stopped); an unjoined failing task logged when
// it fails; printed costs that add up (runtime/cloud/cost_report.*).
#include <catch2/catch.hpp>

#include <signal.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "cloud/cost_report.hpp"
#include "run/record.hpp"
#include "test_text.hpp"

using nlohmann::json;
using runara::test::ChildProcess;
using runara::test::ChildResult;
using runara::test::run_runara;
using runara::test::temp_dir;
using runara::test::write_temp_file;

using runara::test::contains;
using runara::test::read_all;

namespace {


struct Recorded {
  ChildResult r;
  json run;
  std::string log;
};

Recorded run_recorded(const std::string& code, std::vector<std::string> flags = {}, std::vector<std::string> params = {}) {
  const std::string dir = temp_dir("record");
  const std::string script = write_temp_file(dir, "scenario.lua", code);
  std::vector<std::string> args{"--out", dir + "/out"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back(script);
  args.insert(args.end(), params.begin(), params.end());
  Recorded out;
  out.r = run_runara(args, 30);
  const json results = json::parse(read_all(dir + "/out/results.json"), nullptr, false);
  if (results.is_object() && results.contains("run")) out.run = results["run"];
  out.log = read_all(dir + "/out/run.log");
  return out;
}

// The same, stopped by `signal_number` once the script has started (it prints "ready", then waits).
Recorded signalled_run(int signal_number) {
  const std::string dir = temp_dir("record-signal");
  const std::string script =
      write_temp_file(dir, "scenario.lua", "runara.log('started')\nprint('ready')\nrunara.sleep(60)\nprint('not reached')\n");
  ChildProcess child({RUNARA_BINARY, "--out", dir + "/out", script});
  child.close_stdin();
  Recorded out;
  const bool ready = child.wait_for_output("ready", 20);
  child.signal(signal_number);
  out.r = child.wait(20);
  REQUIRE(ready);
  const json results = json::parse(read_all(dir + "/out/results.json"), nullptr, false);
  if (results.is_object() && results.contains("run")) out.run = results["run"];
  out.log = read_all(dir + "/out/run.log");
  return out;
}

std::string last_line(const std::string& text) {
  const std::size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

TEST_CASE("run record: a failed run records its status, exit code, error with file:line and its inputs", "[record]") {
  const Recorded f = run_recorded("local x = 1\n\nerror('the scenario broke')\n", {"--max-runtime", "20"},
                                  {"size=big", "plain"});
  INFO(f.r.err);
  CHECK(f.r.exit_code == 1);
  REQUIRE(f.run.is_object());
  CHECK(f.run["status"] == "failed");
  CHECK(f.run["exit_code"] == 1);
  CHECK(f.run["error"].get<std::string>().find("the scenario broke") != std::string::npos);
  const std::string where = f.run["error_location"].get<std::string>();
  REQUIRE(where.size() > 15);
  CHECK(where.substr(where.size() - 15) == "/scenario.lua:3");
  CHECK(f.run["runara_version"] == runara::version());
  CHECK(f.run["script"].get<std::string>().find("scenario.lua") != std::string::npos);
  CHECK(f.run["params"] == json{{"size", "big"}});
  CHECK(f.run["args"] == json::array({"size=big", "plain"}));
  CHECK(f.run["flags"]["max_runtime_s"] == 20.0);
  CHECK(f.run["machines"] == json::array());
  CHECK(f.run["total_cost_usd"] == 0.0);
  const double start = f.run["start_unix"], end = f.run["end_unix"], duration = f.run["duration_s"];
  CHECK(end >= start);
  CHECK(duration >= 0);
  CHECK(end - start == Approx(duration).margin(1e-6));
  CHECK(f.run["start_utc"].get<std::string>().back() == 'Z');
  // run.log ends with the error and the exit status.
  CHECK(f.log.find("error: ") != std::string::npos);
  CHECK(f.log.find("the scenario broke") != std::string::npos);
  CHECK(last_line(f.log).find("exit status 1 (failed)") != std::string::npos);
}

TEST_CASE("run record: a successful run, a watchdog stop and a refused result name", "[record]") {
  SECTION("ok: written even when the script wrote nothing") {
    const Recorded ok = run_recorded("print('hi')\n");
    CHECK(ok.r.exit_code == 0);
    REQUIRE(ok.run.is_object());
    CHECK(ok.run["status"] == "ok");
    CHECK(ok.run["exit_code"] == 0);
    CHECK(ok.run["error"].is_null());
    CHECK(ok.run["error_location"].is_null());
    CHECK(last_line(ok.log).find("exit status 0 (ok)") != std::string::npos);
  }
  SECTION("watchdog") {
    const Recorded w = run_recorded("runara.result('partial', 7)\nrunara.sleep(30)\n", {"--max-runtime", "1"});
    CHECK(w.r.exit_code == 3);
    REQUIRE(w.run.is_object());
    CHECK(w.run["status"] == "watchdog");
    CHECK(w.run["exit_code"] == 3);
    CHECK(last_line(w.log).find("exit status 3 (watchdog)") != std::string::npos);
  }
  SECTION("a script cannot forge the record") {
    const Recorded forged = run_recorded("runara.result('run', {status = 'ok'})\n");
    CHECK(forged.r.exit_code == 1);
    CHECK(forged.r.err.find("'run' is written by runara itself") != std::string::npos);
    REQUIRE(forged.run.is_object());
    CHECK(forged.run["status"] == "failed");
  }
}

TEST_CASE("run record: a run stopped by SIGINT, SIGTERM or SIGHUP is 'stopped', with the signal's exit status", "[record][signals]") {
  struct Case {
    const char* name;
    int signal_number;
    int exit_code;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"SIGINT", SIGINT, 130, "interrupted (SIGINT)"},
      {"SIGTERM", SIGTERM, 143, "terminated (SIGTERM)"},
      {"SIGHUP", SIGHUP, 129, "hung up (SIGHUP)"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      const Recorded s = signalled_run(c.signal_number);
      INFO("stdout: " << s.r.out << "\nstderr: " << s.r.err << "\nrun.log: " << s.log);
      CHECK_FALSE(s.r.timed_out);
      CHECK(s.r.exit_code == c.exit_code);
      CHECK_FALSE(contains(s.r.out, "not reached"));
      REQUIRE(s.run.is_object());
      CHECK(s.run["status"] == "stopped");
      CHECK(s.run["exit_code"] == c.exit_code);
      CHECK(s.run["error"].is_string());
      CHECK(contains(s.run["error"].dump(), c.message));
      CHECK(s.run["error_location"].is_null());
      CHECK(s.run["end_unix"].get<double>() >= s.run["start_unix"].get<double>());
      // run.log: what the script logged, then the reason it was stopped, then the exit status, last.
      const std::size_t started = s.log.find("started");
      const std::size_t reason = s.log.find(std::string("error: ") + c.message, started == std::string::npos ? 0 : started);
      const std::size_t status = s.log.find("exit status " + std::to_string(c.exit_code) + " (stopped)");
      CHECK(started != std::string::npos);
      CHECK(reason != std::string::npos);
      CHECK(status != std::string::npos);
      CHECK(reason < status);
      CHECK(contains(last_line(s.log), "exit status " + std::to_string(c.exit_code) + " (stopped)"));
    }
  }
}

TEST_CASE("run record: a spawned task that fails unjoined is logged when it fails", "[record]") {
  const Recorded t = run_recorded(
      "runara.spawn(function() runara.sleep(0.05) error('task went wrong') end)\n"
      "runara.sleep(0.5)\n"
      "runara.log('MAIN STILL RUNNING')\n");
  INFO(t.log);
  CHECK(t.r.exit_code == 1);
  CHECK(contains(t.r.err, "task went wrong"));
  CHECK(contains(t.r.err, "never joined"));
  const std::size_t failed = t.log.find("task went wrong");
  const std::size_t main_line = t.log.find("MAIN STILL RUNNING");
  REQUIRE(failed != std::string::npos);
  REQUIRE(main_line != std::string::npos);
  CHECK(failed < main_line);
  CHECK(t.log.find("scenario.lua:1") != std::string::npos);  // the task's error keeps file:line
  REQUIRE(t.run.is_object());
  CHECK(t.run["status"] == "failed");
  CHECK(t.run["error_location"].get<std::string>().find("scenario.lua:1") != std::string::npos);
}

TEST_CASE("run record: thousands of failing unjoined tasks log the first ones and a count, not a flood", "[record]") {
  const Recorded t = run_recorded(
      "for i = 1, 5000 do runara.spawn(function() error('task ' .. i .. ' went wrong') end) end\n"
      "runara.sleep(0.1)\n");
  CHECK(t.r.exit_code == 1);
  std::size_t logged = 0;
  for (std::size_t at = t.log.find("went wrong"); at != std::string::npos; at = t.log.find("went wrong", at + 1)) ++logged;
  CHECK(logged == 21);  // 20 as they failed, and the first again as the run's error
  CHECK(contains(t.log, "and 4980 more task(s) failed without being joined"));
  CHECK(t.log.size() < 64 * 1024);
}

TEST_CASE("run record: tasks still queued when the memory cap stops the run are cancelled, not each failed", "[record]") {
  const Recorded t = run_recorded(
      "local keep = {}\n"
      "while true do keep[#keep + 1] = runara.spawn(function() end) end\n",
      {"--max-memory", "16M"});
  CHECK(t.r.exit_code == 1);
  CHECK(contains(t.log, "memory limit"));
  CHECK_FALSE(contains(t.log, "failed (not joined yet)"));
  CHECK(t.log.size() < 64 * 1024);
  REQUIRE(t.run.is_object());
  CHECK(contains(t.run["error"].dump(), "memory limit"));
}

TEST_CASE("run record: error_location finds the first file:line", "[record]") {
  CHECK(runara::error_location("/tmp/x/a.lua:12: boom") == "/tmp/x/a.lua:12");
  CHECK(runara::error_location("task 3 failed and was never joined: b.lua:7: oops") == "b.lua:7");
  CHECK(runara::error_location("stopped by the watchdog: 1 s (--max-runtime)") == "");
  CHECK(runara::error_location("http://127.0.0.1:8000/v1: refused") == "");
}

TEST_CASE("printed machine costs add up to the printed total", "[record]") {
  // Two machines that each cost less than half a cent: printed to the cent they would read
  // $0.00 and $0.00 beside a total of $0.01.
  const auto lines = runara::cost_report({{"droplet a", 0.0046}, {"droplet b", 0.0046}});
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "droplet a, cost $0.0046");
  CHECK(lines[1] == "droplet b, cost $0.0046");
  CHECK(lines[2] == "machines of this run cost $0.0092 in all");
  // The total is the sum of the printed parts, not the rounding of the exact sum.
  const auto parts = runara::cost_report({{"a", 0.00004}, {"b", 0.00004}, {"c", 0.00004}});
  CHECK(parts.back() == "machines of this run cost $0.0000 in all");
}

TEST_CASE("run record: a C function spawned directly fails with the spawn's file:line", "[record]") {
  const Recorded t = run_recorded(
      "local t = runara.spawn(runara.sleep, -1)\n"
      "local ok, err = pcall(t.join, t)\n"
      "print(err)\n"
      "runara.spawn(error, {code = 7})\n"
      "runara.sleep(0.1)\n");
  INFO(t.r.out << t.r.err);
  CHECK(t.r.out.find("scenario.lua:1: runara.sleep: argument #1 (seconds) must be a number >= 0, got -1") != std::string::npos);
  REQUIRE(t.run.is_object());
  CHECK(t.run["error_location"].get<std::string>().find("scenario.lua:4") != std::string::npos);
  CHECK(t.r.err.find("[builtin#") == std::string::npos);
}

// runara.at_exit: a function that runs once at every ending — normal, error, signal, watchdog —
// before teardown, inside the box (a time budget, no waiting, no tasks), so that a scenario's
// report survives Ctrl-C. And the command line that points a run elsewhere (--on) or refuses
// runara's own options after the script.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "test_text.hpp"

using runara::test::ChildProcess;
using runara::test::ChildResult;
using runara::test::contains;
using runara::test::read_all;
using runara::test::run_runara;
using runara::test::temp_dir;

namespace {

// The script writes, from its at_exit function, what ending it was told about.
const std::string kRecordEnding =
    "runara.at_exit(function(e) runara.write_file('ending.txt', e.status .. '|' .. e.reason) "
    "runara.result('at_exit', { status = e.status }) end)\n";

ChildResult signalled(const std::string& out, const std::string& code, int signal_number, int signals = 1) {
  ChildProcess child({RUNARA_BINARY, "--max-runtime", "60", "--out", out, "-e", code});
  child.close_stdin();
  REQUIRE(child.wait_for_output("ready", 20));
  for (int i = 0; i < signals; ++i) {
    child.signal(signal_number);
    if (i + 1 < signals) REQUIRE(child.wait_for_output("in at_exit", 10));
  }
  return child.wait(30);
}

// When run.log says `text` first, in seconds since the run started (its "[  12.345] " stamp);
// -1 if it never does.
double logged_at(const std::string& log, const std::string& text) {
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > 1 && line[0] == '[' && line.find(text) != std::string::npos) return std::atof(line.c_str() + 1);
  }
  return -1;
}

ChildResult run_in(const std::string& cwd, std::vector<std::string> args) {
  args.insert(args.begin(), RUNARA_BINARY);
  ChildProcess child(args, {}, cwd);
  child.close_stdin();
  return child.wait(30);
}

}  // namespace

TEST_CASE("runara.at_exit runs once at every ending, before teardown, and knows why", "[at_exit]") {
  SECTION("a normal end") {
    const std::string out = temp_dir("at-exit") + "/out";
    auto r = run_runara({"--out", out, "-e", kRecordEnding + "print('body done')"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(read_all(out + "/ending.txt") == "ok|");
    CHECK(nlohmann::json::parse(read_all(out + "/results.json"))["at_exit"]["status"] == "ok");
  }
  SECTION("an error: it gets the message, the run still fails with it") {
    const std::string out = temp_dir("at-exit") + "/out";
    auto r = run_runara({"--out", out, "-e", kRecordEnding + "error('boom')"});
    CHECK(r.exit_code == 1);
    CHECK(read_all(out + "/ending.txt") == "error|(command line):2: boom");
  }
  SECTION("the watchdog") {
    const std::string out = temp_dir("at-exit") + "/out";
    auto r = run_runara({"--out", out, "-e", kRecordEnding + "watchdog.limit(0.5) while true do end"});
    CHECK(r.exit_code == 3);
    CHECK(contains(read_all(out + "/ending.txt"), "watchdog|stopped by the watchdog"));
  }
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    DYNAMIC_SECTION("signal " << sig << ", waiting or computing") {
      for (const char* body : {"print('ready') runara.sleep(60)", "print('ready') while true do end"}) {
        const std::string out = temp_dir("at-exit") + "/out";
        auto r = signalled(out, kRecordEnding + body, sig);
        INFO(r.err);
        CHECK(r.exit_code == (sig == SIGINT ? 130 : sig == SIGTERM ? 143 : 129));
        const std::string ending = read_all(out + "/ending.txt");
        CHECK(contains(ending, sig == SIGINT ? "interrupted|interrupted (SIGINT)"
                                             : sig == SIGTERM ? "terminated|terminated (SIGTERM)" : "hangup|hung up (SIGHUP)"));
        CHECK(nlohmann::json::parse(read_all(out + "/results.json")).contains("at_exit"));
      }
    }
  }
}

TEST_CASE("runara.at_exit stays in the box: no waiting, no tasks, a time budget, a second signal", "[at_exit]") {
  SECTION("waiting and spawning raise inside it; the next function still runs") {
    const std::string out = temp_dir("at-exit") + "/out";
    auto r = run_runara({"--out", out, "-e",
                         "runara.at_exit(function() runara.write_file('second.txt', 'ran') end)\n"
                         "runara.at_exit(function() runara.sleep(1) end)\n"
                         "runara.at_exit(function() runara.spawn(print, 1) end)\n"});
    INFO(r.err);
    CHECK(r.exit_code == 0);  // their errors are logged; they do not change how the run ended
    CHECK(contains(r.err, "cannot wait inside a runara.at_exit function: the run is ending"));
    CHECK(contains(r.err, "runara.spawn: no new task inside a runara.at_exit function"));
    CHECK(read_all(out + "/second.txt") == "ran");
  }
  SECTION("an endless function is stopped after its budget, and teardown goes on") {
    const std::string out = temp_dir("at-exit") + "/out";
    auto r = run_runara({"--out", out, "-e", "runara.at_exit(function() while true do end end) print('x')"}, 40);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.seconds < 20);
    CHECK(contains(r.err, "runara.at_exit: out of time"));
  }
  SECTION("after Ctrl-C, a second Ctrl-C ends a slow at_exit function at once") {
    const std::string out = temp_dir("at-exit") + "/out";
    auto r = signalled(out, "runara.at_exit(function() print('in at_exit') while true do end end) print('ready') runara.sleep(60)",
                       SIGINT, 2);
    INFO(r.err);
    CHECK(r.exit_code == 130);
    CHECK(r.seconds < 8);
    CHECK(contains(r.err, "functions stopped"));
  }
  SECTION("registering: a function only, at most 64, not while the run ends") {
    auto bad = run_runara({"--out", temp_dir("at-exit") + "/out", "-e", "runara.at_exit(42)"});
    CHECK(bad.exit_code == 1);
    CHECK(contains(bad.err, "bad argument #1 to 'at_exit' (function expected, got number)"));
    auto many = run_runara({"--out", temp_dir("at-exit") + "/out", "-e", "for i = 1, 65 do runara.at_exit(print) end"});
    CHECK(many.exit_code == 1);
    CHECK(contains(many.err, "at most 64 functions"));
    auto nested = run_runara({"--out", temp_dir("at-exit") + "/out", "-e",
                              "runara.at_exit(function() runara.at_exit(print) end)"});
    CHECK(contains(nested.err, "runara.at_exit: the run is already ending"));
  }
}

// Each attack spends its at_exit function's 10 s on C calls of tens of milliseconds, a few
// instructions apart. The instruction hook used to look at the budget every 1000 instructions
// only, so each ran on for 250 or more such calls (10 s to minutes) after the budget, the run's
// machines still up. Now the first instruction after the budget raises, so what runs late is
// the call in flight; collectgarbage itself stops between steps.
TEST_CASE("runara.at_exit ends within half a second of its 10 s budget, whatever it calls", "[at_exit]") {
  // Before the main chunk ends: a 1 MiB string (the C calls make 8 MiB of it: a few tens of
  // milliseconds, more on a loaded machine), and for the collector, a heap of 1.5 million small
  // tables (about 150 MiB), which one full collection takes about a tenth of a second to go
  // through (more under load).
  const std::string setup = "local s = ('x'):rep(2^20)\n";
  struct Attack {
    const char* name;
    std::string code;
  };
  const std::vector<Attack> attacks{
      {"control: a plain busy loop, stopped on time before too",
       setup + "runara.at_exit(function() runara.log('at_exit started') while true do end end)"},
      {"a full collection in a loop over a big heap",
       "KEEP = {} for i = 1, 1.5e6 do KEEP[i] = { i } end\n"
       "runara.at_exit(function() runara.log('at_exit started') while true do collectgarbage() end end)"},
      {"pcall swallowing the timeout around long C calls",
       setup + "runara.at_exit(function() runara.log('at_exit started')\n"
               "  while true do pcall(function() while true do local _ = s:rep(8) end end) end end)"},
      {"a coroutine's loop, resumed again after every error",
       setup + "runara.at_exit(function() runara.log('at_exit started')\n"
               "  while true do coroutine.resume(coroutine.create(function()\n"
               "    while true do local _ = s:rep(8) end end)) end end)"},
      {"string functions over big strings",
       setup + "local parts = {} for i = 1, 8 do parts[i] = s end\n"
               "local big = table.concat(parts)\n"
               "runara.at_exit(function() runara.log('at_exit started')\n"
               "  while true do local a = table.concat(parts) a = big:upper() a = ('%s%s'):format(big, s) end end)"},
      {"table.sort with a C function as the comparator",
       "local t = {} for i = 1, 1e5 do t[i] = '500000' end\n"
       "runara.at_exit(function() runara.log('at_exit started') table.sort(t, string.rep) end)"},
      {"xpcall handlers that keep working, and a __tostring",
       setup + "local e = setmetatable({}, { __tostring = function() while true do local _ = s:rep(8) end end })\n"
               "runara.at_exit(function() runara.log('at_exit started')\n"
               "  while true do xpcall(error, function() tostring(e) end) end end)"},
  };
  // All at once: each waits out its 10 s, and they are compared with the control run beside
  // them, under the same load.
  std::vector<std::string> outs;
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (const auto& attack : attacks) {
    outs.push_back(temp_dir("at-exit-time") + "/out");
    children.push_back(std::make_unique<ChildProcess>(std::vector<std::string>{RUNARA_BINARY, "--out", outs.back(), "-e", attack.code}));
    children.back()->close_stdin();
  }
  std::vector<double> took;
  for (std::size_t i = 0; i < attacks.size(); ++i) {
    const ChildResult r = children[i]->wait(60);
    const std::string log = read_all(outs[i] + "/run.log");
    INFO(attacks[i].name << "\n" << log << r.err);
    CHECK(r.exit_code == 0);  // an at_exit function's failure does not change how the run ended
    const double started = logged_at(log, "at_exit started");
    const double stopped = logged_at(log, "runara.at_exit: functions stopped");  // teardown starts right after
    CHECK(started > 0);
    CHECK(stopped > 0);  // not killed after a minute
    CHECK(contains(log, "runara.at_exit: out of time"));
    took.push_back(started > 0 && stopped > 0 ? stopped - started : 1e9);
  }
  for (std::size_t i = 1; i < attacks.size(); ++i) {
    INFO(attacks[i].name << ": at_exit ran " << took[i] << " s; the plain loop beside it " << took[0] << " s");
    CHECK(took[i] >= 9.5);  // it got its budget (its log line comes a little after it starts)
    // 10.5 s: the budget and the half second promised; more only if the plain loop was itself
    // late (a loaded machine). The margin over the plain loop is a second, not the half promised:
    // seven busy runs share two cores here (and CI runs other tests beside them), so the C call in
    // flight at the deadline takes several times its CPU time in wall time. The old hook overran
    // by 10 s and more.
    CHECK(took[i] <= std::max(10.5, took[0] + 1.0));
  }
}

TEST_CASE("collectgarbage inside runara.at_exit still collects, in steps", "[at_exit]") {
  const std::string out = temp_dir("at-exit-gc") + "/out";
  auto r = run_runara({"--out", out, "-e",
                       "KEEP = {} for i = 1, 2e5 do KEEP[i] = { i } end\n"
                       "runara.at_exit(function()\n"
                       "  local before = collectgarbage('count') KEEP = nil\n"
                       "  assert(collectgarbage() == 0)\n"
                       "  local freed = before - collectgarbage('count')\n"
                       "  local stepped = false for _ = 1, 1e6 do if collectgarbage('step') then stepped = true break end end\n"
                       "  runara.write_file('gc.txt', (freed > 10000 and 'freed' or 'kept ' .. freed) .. ' ' .. tostring(stepped))\n"
                       "end)"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(read_all(out + "/gc.txt") == "freed true");
}

TEST_CASE("runara --on names a machine or a server, grants it, and the script sees runara.on", "[cli]") {
  const std::string out = temp_dir("cli-on");
  auto r = run_runara({"--out", out + "/a", "--on", "bench@10.0.0.5:2222", "--on", "https://llm.example.com/", "-e",
                       "local m = runara.on.machine print(m.user, m.host, m.port, runara.on.endpoint)"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "bench\t10.0.0.5\t2222\thttps://llm.example.com\n");
  auto plain = run_runara({"--out", out + "/b", "-e", "print(next(runara.on), runara.help)"});
  CHECK(plain.out == "nil\tfalse\n");
  // The machine is granted for ssh: connecting is attempted (and refused by the closed port),
  // not denied as an ungranted host.
  auto granted = run_runara({"--out", out + "/c", "--on", "root@127.0.0.1:1", "-e",
                             "print(pcall(ssh.connect, '127.0.0.1:1', { timeout = 1 }))"});
  CHECK_FALSE(contains(granted.out, "not granted"));
  CHECK_FALSE(contains(granted.out, "--allow-host"));
  for (const auto& [arg, message] : std::vector<std::pair<std::string, std::string>>{
           {"bob", "--on expects USER@HOST[:PORT]"},
           {"root@", "is not a host name or address"},
           {"-oProxyCommand=x@h", "is not a user name"},
           {"root@h:99999", "the port must be a number from 1 to 65535"},
           {"root@[::1", "'[' without ']'"},
           {"http://u:p@h/", "credentials in the URL are not accepted"},
           {"local", "not available yet"}}) {
    INFO(arg);
    auto bad = run_runara({"--on", arg, "-e", ""});
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, message));
  }
  auto plan = run_runara({"plan", "--on", "root@127.0.0.1:1", std::string(RUNARA_SOURCE_DIR) + "/scripts/llama70b_fp8.lua"});
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.err, "--on is not rehearsed"));
  auto twice = run_runara({"--on", "a@h1", "--on", "b@h2", "-e", ""});
  CHECK(twice.exit_code == 2);
  CHECK(contains(twice.err, "--on names one machine"));
}

TEST_CASE("runara's own options after the script are refused with where to put them; -- passes them on", "[cli]") {
  const std::string dir = temp_dir("cli-after");
  const std::string script = runara::test::write_temp_file(dir, "s.lua", "print(#runara.args, runara.args[#runara.args])");
  for (const char* flag : {"--out", "--out=x", "--sim", "-q", "--max-runtime", "--secret"}) {
    INFO(flag);
    auto r = run_runara({script, "n=1", flag, "x"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "comes after the script, where it would be passed to the script; put runara's options before the script"));
  }
  auto literal = run_runara({"--out", dir + "/o", script, "n=1", "--", "--out", "x"});
  INFO(literal.err);
  CHECK(literal.exit_code == 0);
  CHECK(literal.out == "3\tx\n");
  auto script_flag = run_runara({"--out", dir + "/o2", script, "--verbose"});
  CHECK(script_flag.out == "1\t--verbose\n");
}

TEST_CASE("each script's --help lists only the --on forms it accepts", "[cli]") {
  const std::string dir = temp_dir("cli-script-help-on");
  struct Case {
    const char* script;
    bool machine, endpoint;
  };
  for (const Case& c : {Case{"llama70b_fp8.lua", true, true}, Case{"serving_sweep.lua", true, true}, Case{"gemm.lua", true, false},
                        Case{"training.lua", true, false}, Case{"finetune.lua", true, false}, Case{"mlperf_llama2_70b.lua", true, false},
                        Case{"serving_replicas.lua", true, false}, Case{"serving_multinode.lua", false, false},
                        Case{"compare_mi300x_h100.lua", false, false}, Case{"compare_training.lua", false, false}}) {
    const auto r = run_in(dir, {std::string(RUNARA_SOURCE_DIR) + "/scripts/" + c.script, "--help"});
    INFO(c.script << ": " << r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "Where it runs: "));
    CHECK(contains(r.out, "--on USER@HOST") == c.machine);
    CHECK(contains(r.out, "--on http(s)://") == c.endpoint);
    if (!c.machine && !c.endpoint) CHECK(contains(r.out, "it takes no --on"));
  }
}

TEST_CASE("runara SCRIPT --help prints a scenario's declared params and leaves nothing behind", "[cli]") {
  const std::string dir = temp_dir("cli-script-help");
  auto r = run_in(dir, {std::string(RUNARA_SOURCE_DIR) + "/scripts/llama70b_fp8.lua", "--help"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "usage: runara [OPTIONS]"));
  CHECK(contains(r.out, "max_model_len"));
  CHECK(contains(r.out, "(docker|pip, default docker)"));
  CHECK_FALSE(std::filesystem::exists(dir + "/results"));
  auto typo = run_in(dir, {std::string(RUNARA_SOURCE_DIR) + "/scripts/llama70b_fp8.lua", "sise=x"});
  CHECK(typo.exit_code == 2);  // the command line's mistake: a usage error, said without a traceback
  CHECK(contains(typo.err, "unknown param 'sise' (did you mean 'size'?)"));
  CHECK_FALSE(contains(typo.err, "stack traceback"));
  CHECK_FALSE(contains(typo.err, "droplet"));  // refused before anything was created
}

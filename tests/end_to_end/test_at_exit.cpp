// runara.at_exit: a function that runs once at every ending — normal, error, signal, watchdog —
// before teardown, inside the box (a time budget, no waiting, no tasks), so that a scenario's
// report survives Ctrl-C. And the command line that points a run elsewhere (--on) or refuses
// runara's own options after the script.
#include <catch2/catch.hpp>

#include <signal.h>

#include <filesystem>
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

// The `runara` command line: --version / --help, usage errors (exit 2), script errors (exit 1)
// with locations and tracebacks, argument type errors of the runtime functions, script
// arguments, -e, the output folder, file permissions, and secrets never reaching any output.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "runara/runtime.hpp"
#include "test_text.hpp"

using runara::test::ChildResult;
using runara::test::run_runara;
using runara::test::temp_dir;
using runara::test::write_temp_file;

using runara::test::contains;
using runara::test::read_all;

namespace {



bool exists(const std::string& path) { return std::filesystem::exists(path); }

// Runs a script file with its output folder in a fresh temp dir.
struct ScriptRun {
  std::string dir, out, script;
  ChildResult r;
};

ScriptRun run_script(const std::string& name, const std::string& code, std::vector<std::string> before = {},
                     std::vector<std::string> after = {}, std::map<std::string, std::string> env = {}) {
  ScriptRun s;
  s.dir = temp_dir("cli");
  s.out = s.dir + "/out";
  s.script = write_temp_file(s.dir, name, code);
  std::vector<std::string> args{"--max-runtime", "30", "--out", s.out};
  args.insert(args.end(), before.begin(), before.end());
  args.push_back(s.script);
  args.insert(args.end(), after.begin(), after.end());
  s.r = run_runara(args, 30, env);
  return s;
}

}  // namespace

TEST_CASE("runara --version prints the version", "[cli]") {
  auto r = run_runara({"--version"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "runara " + runara::version() + "\n");
  CHECK_FALSE(runara::version().empty());
}

TEST_CASE("runara --help shows usage and every exit status", "[cli]") {
  for (const char* flag : {"--help", "-h"}) {
    auto r = run_runara({flag});
    INFO(r.out);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "usage: runara"));
    CHECK(contains(r.out, "--max-runtime"));
    CHECK(contains(r.out, "--secret"));
    CHECK(contains(r.out, "Exit status"));
    for (const char* code : {"\n  0 ", "\n  1 ", "\n  2 ", "\n  3 ", "\n  129 ", "\n  130 ", "\n  143 "}) {
      CHECK(contains(r.out, code));
    }
  }
}

TEST_CASE("usage errors exit with 2 and say what is wrong", "[cli]") {
  SECTION("an unknown option is named") {
    auto r = run_runara({"--frobnicate", "x.lua"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "--frobnicate"));
    CHECK(r.out.empty());
  }
  SECTION("a missing script is named by its path") {
    const std::string path = temp_dir("cli-missing") + "/does-not-exist.lua";
    auto r = run_runara({"--out", temp_dir("cli-missing-out"), path});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, path));
  }
  SECTION("an option without its value") {
    auto r = run_runara({"--max-runtime"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "--max-runtime"));
  }
  SECTION("an option with a bad value") {
    auto r = run_runara({"--max-memory", "lots", "-e", "print(1)"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "--max-memory"));
    CHECK(contains(r.err, "lots"));
  }
  SECTION("--secret of an unset variable") {
    auto r = run_runara({"--secret", "RUNARA_TEST_SURELY_UNSET_VARIABLE", "-e", "print(1)"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "RUNARA_TEST_SURELY_UNSET_VARIABLE"));
  }
}

TEST_CASE("runara.usage_error ends the run with 2, its message said without a traceback", "[cli]") {
  // The main chunk ending with it: exit 2, the message as given, no traceback; like runara's own
  // usage errors, no results folder when the run wrote nothing.
  auto s = run_script("params.lua", "local function check() runara.usage_error('param n=x: must be a number') end\ncheck()\n");
  INFO(s.r.err);
  CHECK(s.r.exit_code == 2);
  CHECK(contains(s.r.err, "runara: param n=x: must be a number\n"));
  CHECK_FALSE(contains(s.r.err, "stack traceback"));
  CHECK_FALSE(contains(s.r.err, "params.lua:"));
  CHECK_FALSE(exists(s.out));
  // What it logged or wrote before runara did anything for it (no machine, command, transfer or
  // load) goes with the folder: the run measured nothing (issue 37). A usage error after such
  // work keeps the record.
  s = run_script("logged.lua", "runara.log('checking params')\nrunara.write_file('x.txt', 'x')\n"
                               "runara.usage_error('param n=x: must be a number')\n");
  CHECK(s.r.exit_code == 2);
  CHECK(contains(s.r.err, "runara: param n=x: must be a number\n"));
  CHECK_FALSE(contains(s.r.err, "results in"));
  CHECK_FALSE(exists(s.out));
  // Caught, it is a plain error with the message; a later, different error is the script's (1,
  // with its traceback). The same message raised again by error() after a pcall is still usage.
  s = run_script("caught.lua",
                 "local ok, e = pcall(runara.usage_error, 'bad param')\n"
                 "print(ok, e)\n"
                 "error('something else')\n");
  INFO(s.r.out << s.r.err);
  CHECK(s.r.exit_code == 1);
  CHECK(contains(s.r.out, "false\tbad param"));
  CHECK(contains(s.r.err, "caught.lua:3: something else"));
  CHECK(contains(s.r.err, "stack traceback"));
  s = run_script("rethrown.lua", "local ok, e = pcall(runara.usage_error, 'bad param')\nerror(e, 0)\n");
  CHECK(s.r.exit_code == 2);
  // In a task it is the script's error (1): the task's failure names the spawn's line, joined or not.
  s = run_script("joined.lua", "local t = runara.spawn(function() runara.usage_error('in a task') end)\nt:join()\n");
  INFO(s.r.err);
  CHECK(s.r.exit_code == 1);
  CHECK(contains(s.r.err, "joined.lua:1: in a task"));
  s = run_script("unjoined.lua", "runara.spawn(function() runara.usage_error('in a task') end)\nrunara.sleep(0.1)\n");
  INFO(s.r.err);
  CHECK(s.r.exit_code == 1);
  CHECK(contains(s.r.err, "in a task"));
  // Its own bad input: a message that is not a string, or too long to keep.
  s = run_script("bad.lua", "runara.usage_error(42)\n");
  CHECK(s.r.exit_code == 1);
  CHECK(contains(s.r.err, "runara.usage_error: argument #1 (message) must be a string"));
  s = run_script("long.lua", "runara.usage_error(string.rep('x', 5000))\n");
  CHECK(s.r.exit_code == 1);
  CHECK(contains(s.r.err, "runara.usage_error: the message is 5000 bytes, at most 4096"));
}

TEST_CASE("a syntax error exits with 1 and names file:line", "[cli]") {
  auto s = run_script("syntax.lua", "local a = 1\nlocal b = = 2\nprint('ran')\n");
  INFO(s.r.err);
  CHECK(s.r.exit_code == 1);
  CHECK(contains(s.r.err, "syntax.lua:2:"));
  CHECK_FALSE(contains(s.r.out, "ran"));
}

TEST_CASE("a runtime error exits with 1, with file:line and a stack traceback on stderr", "[cli]") {
  auto s = run_script("crash.lua",
                      "local function inner()\n"
                      "  error('machine exploded')\n"
                      "end\n"
                      "local function outer() inner() end\n"
                      "outer()\n");
  INFO(s.r.err);
  CHECK(s.r.exit_code == 1);
  CHECK(contains(s.r.err, "crash.lua:2: machine exploded"));
  CHECK(contains(s.r.err, "stack traceback"));
  CHECK(contains(s.r.err, "crash.lua:4"));
  CHECK(contains(s.r.err, "crash.lua:5"));
  CHECK(s.r.out.empty());
}

TEST_CASE("wrong argument types name the function, the argument and the expected type", "[cli]") {
  struct Case {
    const char* code;
    std::vector<const char*> expected;
  };
  const std::vector<Case> cases = {
      {"runara.sleep('x')", {"runara.sleep", "argument #1", "seconds", "must be a number", "got a string"}},
      {"runara.spawn(1)", {"runara.spawn", "argument #1", "fn", "must be a function", "got a number"}},
      {"watchdog.limit(-1)", {"watchdog.limit", "argument #1", "seconds", "must be a number > 0"}},
      {"runara.write_file(1)", {"runara.write_file", "argument #1", "path", "must be a string", "got a number"}},
      {"runara.write_file('ok.txt', true)", {"runara.write_file", "argument #2", "data", "a string or a table"}},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.code) {
      auto r = run_runara({"--max-runtime", "30", "--out", temp_dir("cli-types"), "-e", c.code});
      INFO(r.err);
      CHECK(r.exit_code == 1);
      for (const char* text : c.expected) CHECK(contains(r.err, text));
    }
  }
}

TEST_CASE("argument errors point at the script line that made the call", "[cli]") {
  auto s = run_script("argcheck.lua",
                      "print(select(2, pcall(function() runara.spawn(1) end)))\n"
                      "print(select(2, pcall(function() watchdog.limit(-1) end)))\n"
                      "print(select(2, pcall(function() runara.sleep('x') end)))\n"
                      "print(select(2, pcall(function() runara.write_file(1) end)))\n");
  INFO(s.r.out);
  CHECK(s.r.exit_code == 0);
  CHECK(contains(s.r.out, "argcheck.lua:1: runara.spawn: argument #1"));
  CHECK(contains(s.r.out, "argcheck.lua:2: watchdog.limit: argument #1"));
  // runara.sleep and runara.write_file are async functions (wrapped by the runtime's shim)
  CHECK(contains(s.r.out, "argcheck.lua:3: runara.sleep: argument #1"));
  CHECK(contains(s.r.out, "argcheck.lua:4: runara.write_file: argument #1"));
}

TEST_CASE("script arguments reach runara.args, arg and runara.params", "[cli]") {
  auto s = run_script("args.lua",
                      "print(#runara.args, table.concat(runara.args, '|'))\n"
                      "print(arg[0], arg[1], arg[#arg])\n"
                      "print(runara.params.size, runara.params.n, type(runara.params.n))\n"
                      "print(runara.params.expr, runara.params.plain, runara.params[''])\n",
                      {}, {"plain", "size=gpu-mi300x1-192gb", "n=3", "expr=a=b", "=skipped", "--not-an-option"});
  INFO(s.r.err);
  CHECK(s.r.exit_code == 0);
  const std::string expected =
      "6\tplain|size=gpu-mi300x1-192gb|n=3|expr=a=b|=skipped|--not-an-option\n" +
      s.script + "\tplain\t--not-an-option\n"
      "gpu-mi300x1-192gb\t3\tstring\n"
      "a=b\tnil\tnil\n";
  CHECK(s.r.out == expected);
}

TEST_CASE("runara -e runs a string, with arguments after it", "[cli]") {
  auto r = run_runara({"--out", temp_dir("cli-e"), "-e",
                       "print(6 * 7) print(#runara.args, runara.params.k, arg[1])", "first", "k=v"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "42\n2\tv\tfirst\n");
  auto bad = run_runara({"--out", temp_dir("cli-e"), "-e", "error('from -e')"});
  CHECK(bad.exit_code == 1);
  CHECK(contains(bad.err, "(command line):1: from -e"));
}

TEST_CASE("runara --out DIR receives run.log and results.json", "[cli]") {
  const std::string dir = temp_dir("cli-out");
  const std::string out = dir + "/nested/results";  // created as needed
  auto r = run_runara({"--out", out, "-e",
                       "runara.log('warming up', 3, 'machines')\n"
                       "runara.result('tokens_per_s', 1234.5)\n"
                       "runara.result('config', {size = 'big', gpus = {1, 2}})\n"
                       "print(runara.out_dir())"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == out + "\n");
  CHECK(contains(r.err, "results in " + out));
  const std::string log = read_all(out + "/run.log");
  CHECK(contains(log, "warming up 3 machines"));
  const auto json = nlohmann::json::parse(read_all(out + "/results.json"), nullptr, false);
  REQUIRE_FALSE(json.is_discarded());
  CHECK(json["tokens_per_s"] == 1234.5);
  CHECK(json["config"]["size"] == "big");
  CHECK(json["config"]["gpus"] == nlohmann::json::array({1, 2}));
}

TEST_CASE("runara.write_file stays inside the output folder", "[cli]") {
  const std::string dir = temp_dir("cli-write");
  const std::string out = dir + "/out";
  auto r = run_runara({"--out", out, "-e",
                       "print(pcall(runara.write_file, '../escaped.txt', 'x'))\n"
                       "print(pcall(runara.write_file, 'sub/../../escaped2.txt', 'x'))\n"
                       "print(pcall(runara.write_file, '" + dir + "/absolute.txt', 'x'))\n"
                       "runara.write_file('sub/ok.txt', 'fine')\n"
                       "runara.write_file('data.json', {a = 1})\n"
                       "print('wrote')"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "false\t"));
  CHECK(contains(r.out, "\"..\" is not allowed"));
  CHECK(contains(r.out, "absolute.txt' is absolute"));
  CHECK(contains(r.out, "wrote\n"));
  CHECK_FALSE(exists(dir + "/escaped.txt"));
  CHECK_FALSE(exists(dir + "/escaped2.txt"));
  CHECK_FALSE(exists(dir + "/absolute.txt"));
  CHECK(read_all(out + "/sub/ok.txt") == "fine");
  CHECK(contains(read_all(out + "/data.json"), "\"a\": 1"));
}

TEST_CASE("runara.read_file reads next to the script and elsewhere only with --allow-read", "[cli]") {
  const std::string dir = temp_dir("cli-read");
  std::filesystem::create_directories(dir + "/scenario");
  std::filesystem::create_directories(dir + "/elsewhere");
  write_temp_file(dir + "/scenario", "prompts.txt", "hello prompts");
  const std::string outside = write_temp_file(dir + "/elsewhere", "secret.txt", "outside data");
  std::filesystem::create_symlink(outside, dir + "/scenario/link.txt");
  const std::string script = write_temp_file(
      dir + "/scenario", "reader.lua",
      "print(runara.read_file('prompts.txt'))\n"
      "print(pcall(runara.read_file, '" + outside + "'))\n"
      "print(pcall(runara.read_file, '../elsewhere/secret.txt'))\n"
      "print(pcall(runara.read_file, 'link.txt'))\n");

  SECTION("denied by default") {
    auto r = run_runara({"--out", dir + "/out1", script});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "hello prompts\n"));
    CHECK_FALSE(contains(r.out, "outside data"));
    CHECK(contains(r.out, "is not allowed"));
    CHECK(contains(r.out, "--allow-read"));
  }
  SECTION("granted with --allow-read (a file, or its folder)") {
    for (const std::string& grant : {outside, dir + "/elsewhere"}) {
      auto r = run_runara({"--out", dir + "/out2", "--allow-read", grant, script});
      INFO(r.out << r.err);
      CHECK(r.exit_code == 0);
      CHECK(contains(r.out, "hello prompts\n"));
      CHECK(contains(r.out, "true\toutside data\ntrue\toutside data\ntrue\toutside data\n"));
    }
  }
}

TEST_CASE("a --secret value never reaches stdout, stderr, run.log or results.json", "[cli]") {
  const std::string name = "RUNARA_TEST_API_TOKEN";
  const std::string value = "tok-9f8e7d6c5b4a3921-SENSITIVE";
  const std::string mask = "<secret " + name + ">";
  auto s = run_script(
      "secret.lua",
      "local h = runara.secret('RUNARA_TEST_API_TOKEN')\n"
      "local v = runara.args[1]  -- the test hands over the value itself, to check redaction\n"
      "print(tostring(h))\n"
      "print(h, 'and', v)\n"
      "print('Authorization: Bearer ' .. v)\n"
      "runara.log('handle', h, 'value', v)\n"
      "runara.result('handle', h)\n"
      "runara.result('nested', {auth = {token = h}, list = {h}})\n"
      "runara.result('value', v)\n"
      "runara.result('header', 'Bearer ' .. v)\n"
      "runara.write_file('leak.txt', 'token=' .. v)\n"
      "print(pcall(os.getenv, 'RUNARA_TEST_API_TOKEN'))\n"
      "print(pcall(function() return h .. '' end))\n"
      "error('giving up with ' .. v)\n",
      {"--secret", name}, {value}, {{name, value}});
  INFO("stdout: " << s.r.out);
  INFO("stderr: " << s.r.err);
  CHECK(s.r.exit_code == 1);
  const std::string log = read_all(s.out + "/run.log");
  const std::string results = read_all(s.out + "/results.json");
  const std::string leak = read_all(s.out + "/leak.txt");
  INFO("run.log: " << log);
  INFO("results.json: " << results);
  for (const std::string& text : std::vector<std::string>{s.r.out, s.r.err, log, results, leak}) {
    CHECK_FALSE(contains(text, value));
  }
  // the handle shows as its name; the value is masked the same way
  CHECK(contains(s.r.out, mask + "\n" + mask + "\tand\t" + mask + "\n"));
  CHECK(contains(s.r.out, "Authorization: Bearer " + mask));
  CHECK(contains(s.r.out, "is a secret"));       // os.getenv refuses it
  CHECK(contains(s.r.out, "cannot be read"));    // so does concatenating the handle
  CHECK(contains(s.r.err, "giving up with " + mask));
  CHECK(contains(log, "handle " + mask + " value " + mask));
  CHECK(leak == "token=" + mask);
  const auto json = nlohmann::json::parse(results, nullptr, false);
  REQUIRE_FALSE(json.is_discarded());
  CHECK(json["handle"] == mask);
  CHECK(json["nested"]["auth"]["token"] == mask);
  CHECK(json["value"] == mask);
  CHECK(json["header"] == "Bearer " + mask);
}

TEST_CASE("a --secret value with JSON-special characters does not leak into JSON output", "[cli]") {
  const std::string name = "RUNARA_TEST_DB_PASSWORD";
  const std::string value = "pa\"ss\\wo/rd-7x41";
  auto s = run_script("secret_json.lua",
                      "runara.result('dsn', 'postgres://u:' .. runara.args[1] .. '@db')\n"
                      "runara.write_file('config.json', {dsn = 'postgres://u:' .. runara.args[1] .. '@db'})\n"
                      "print(runara.args[1])\n",
                      {"--secret", name}, {value}, {{name, value}});
  INFO(s.r.err);
  CHECK(s.r.exit_code == 0);
  CHECK_FALSE(contains(s.r.out, value));
  const std::string results = read_all(s.out + "/results.json");
  INFO("results.json: " << results);
  const auto json = nlohmann::json::parse(results, nullptr, false);
  REQUIRE_FALSE(json.is_discarded());
  // neither the file (where the value would be JSON-escaped) nor the decoded document holds it
  const std::string quoted = nlohmann::json(value).dump();
  CHECK_FALSE(contains(results, quoted.substr(1, quoted.size() - 2)));
  CHECK_FALSE(contains(json["dsn"].get<std::string>(), value));
  // runara.write_file of a table is JSON too
  const std::string config = read_all(s.out + "/config.json");
  INFO("config.json: " << config);
  CHECK_FALSE(contains(config, quoted.substr(1, quoted.size() - 2)));
}

TEST_CASE("cli: --allow-tag and --allow-vpc: checked when given, recorded with the run's flags", "[cli]") {
  const std::string dir = temp_dir("allow-tag");
  // runara's own prefix, in any case, is never the user's to grant: it finds a run's machines.
  for (const char* reserved : {"runara:run-x", "RUNARA:run-x"}) {
    const ChildResult r = run_runara({"--allow-tag", reserved, "-e", "print('ran')"});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, std::string("--allow-tag: tag '") + reserved + "' is reserved"));
    CHECK_FALSE(contains(r.out, "ran"));
  }
  const ChildResult spaced = run_runara({"--allow-tag", "db clients", "-e", "print('ran')"});
  CHECK(spaced.exit_code == 2);
  CHECK(contains(spaced.err, "--allow-tag: tag 'db clients' is not valid"));
  CHECK(run_runara({"--allow-vpc", "", "-e", "print('ran')"}).exit_code == 2);
  const ChildResult ok = run_runara({"--out", dir + "/out", "--allow-tag", "db-clients", "--allow-vpc", "prod-nyc3", "-e",
                                     "runara.write_file('x.txt', 'x')"});
  INFO(ok.err);
  REQUIRE(ok.exit_code == 0);
  const auto record = nlohmann::json::parse(read_all(dir + "/out/results.json"), nullptr, false);
  CHECK(record["run"]["flags"]["allow_tag"] == nlohmann::json::array({"db-clients"}));
  CHECK(record["run"]["flags"]["allow_vpc"] == nlohmann::json::array({"prod-nyc3"}));
}

// The command-line conventions people expect (issue 14): --flag=value, `runara -` for a script
// on stdin, errors piped into the REPL exit non-zero, tracebacks of the script's own frames,
// "did you mean" for flags, a value shown when a number is out of range, and serve-fake-do
// checking its options like serve-fake-llm (and refusing a port in use).
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "loopback_socket.hpp"
#include "test_text.hpp"

using runara::test::ChildProcess;
using runara::test::ChildResult;
using runara::test::run_runara;
using runara::test::temp_dir;

using runara::test::contains;

namespace {


// A loopback listener holding a port, as another server would.
struct Listener {
  int fd = -1, port = 0;
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in a = runara::test::loopback_address();
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);  // as the fakes' HTTP library binds
    bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    listen(fd, 4);
    port = runara::test::bound_port(fd);
  }
  ~Listener() { close(fd); }
};

}  // namespace

TEST_CASE("cli: --flag=value, an unknown flag with a suggestion, a flag that takes no value", "[cli][conventions]") {
  const std::string out = temp_dir("conv");
  const ChildResult ok = run_runara({"--max-runtime=20", "--out=" + out + "/a", "-e", "print(runara.remaining and 1 or 2)"});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  const ChildResult typo = run_runara({"--max-runtim", "20", "-e", "print(1)"});
  CHECK(typo.exit_code == 2);
  CHECK(contains(typo.err, "unknown option '--max-runtim' (did you mean '--max-runtime'?)"));
  const ChildResult bad = run_runara({"--quiet=yes", "-e", "print(1)"});
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "--quiet takes no value"));
}

TEST_CASE("cli: runara - reads the script from standard input", "[cli][conventions]") {
  const std::string out = temp_dir("conv");
  const ChildResult r = run_runara({"--out", out + "/a", "-", "k=v"}, 30, {}, "#!/usr/bin/env runara\nprint('stdin ' .. runara.params.k)\n");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "stdin v\n");
  const ChildResult failing = run_runara({"--out", out + "/b", "-"}, 30, {}, "\nerror('from stdin')\n");
  CHECK(failing.exit_code == 1);
  CHECK(contains(failing.err, "stdin:2: from stdin"));
}

TEST_CASE("cli: errors piped into the REPL make it exit 1; an unfinished statement too", "[cli][conventions]") {
  const std::string out = temp_dir("conv");
  const ChildResult clean = run_runara({"--out", out + "/a"}, 30, {}, "x = 1 +\n2\nprint(x)\n");
  INFO(clean.err);
  CHECK(clean.exit_code == 0);
  CHECK(contains(clean.out, "3\n"));
  const ChildResult failed = run_runara({"--out", out + "/b"}, 30, {}, "error('piped')\nprint('after')\n");
  CHECK(failed.exit_code == 1);
  CHECK(contains(failed.out, "after"));  // the session went on, as a REPL does
  const ChildResult cut = run_runara({"--out", out + "/c"}, 30, {}, "for i = 1, 2 do\n");
  CHECK(cut.exit_code == 1);
  CHECK(contains(cut.err, "ended in the middle of a statement"));
}

TEST_CASE("cli: tracebacks show the script's frames only; a bad number is shown", "[cli][conventions]") {
  const ChildResult r = run_runara({"--out", temp_dir("conv") + "/a", "-e", "local function f() runara.sleep(-1) end\nf()"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "stack traceback:"));
  CHECK(contains(r.err, "(command line):1: in function 'f'"));
  CHECK_FALSE(contains(r.err, "[C]:"));
  CHECK_FALSE(contains(r.err, "\trunara:"));
  const ChildResult limit = run_runara({"--out", temp_dir("conv") + "/b", "-e", "watchdog.limit(-1)"});
  CHECK(limit.exit_code == 1);
  CHECK(contains(limit.err, "must be a number > 0, got -1"));
}

TEST_CASE("serve-fake-do checks its options, exits 0 on --help and refuses a port in use", "[cli][conventions]") {
  const ChildResult help = run_runara({"serve-fake-do", "--help"});
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "usage: runara serve-fake-do"));
  const ChildResult range = run_runara({"serve-fake-do", "--port", "70000"});
  CHECK(range.exit_code == 2);
  CHECK(contains(range.err, "--port expects a port number from 0 to 65535, got '70000'"));
  const ChildResult word = run_runara({"serve-fake-do", "--latency=fast"});
  CHECK(word.exit_code == 2);
  CHECK(contains(word.err, "--latency expects a number of seconds >= 0, got 'fast'"));
  const ChildResult typo = run_runara({"serve-fake-do", "--tokn", "x"});
  CHECK(typo.exit_code == 2);
  CHECK(contains(typo.err, "unknown option '--tokn' (did you mean '--token'?)"));
  Listener busy;
  const ChildResult taken = run_runara({"serve-fake-do", "--port", std::to_string(busy.port)}, 10);
  CHECK(taken.exit_code == 1);
  CHECK(contains(taken.err, "already in use"));
}

TEST_CASE("json log (--json-log): every stderr line is a JSON object, the outcome last", "[cli]") {
  const std::string dir = runara::test::temp_dir("json-log");
  const auto r = runara::test::run_runara({"--json-log", "--out", dir + "/out", "-e",
                                           "runara.log('first \\255 line'); print('to stdout'); error('the end')"});
  REQUIRE(r.exit_code == 1);
  CHECK(r.out == "to stdout\n");  // print() stays plain on stdout
  std::istringstream lines(r.err);
  std::string line;
  std::vector<nlohmann::json> objects;
  while (std::getline(lines, line)) {
    INFO(line);
    REQUIRE_NOTHROW(objects.push_back(nlohmann::json::parse(line)));
  }
  REQUIRE(objects.size() >= 2);
  CHECK(objects.front()["kind"] == "log");
  CHECK(objects.front()["text"].get<std::string>().find("first") != std::string::npos);  // bad UTF-8 replaced, kept
  CHECK(objects.back()["kind"] == "outcome");
  CHECK(objects.back()["exit"] == 1);
  CHECK(objects.back()["text"] == "(command line):1: the end");
  CHECK(objects.back()["out_dir"] == dir + "/out");
}

// One parser for every command (cli/command_line.hpp): the same "did you mean", the same
// missing-value and takes-no-value errors, the command's own usage, exit status 2; --help 0.
TEST_CASE("every subcommand reads its options the same way", "[cli][conventions]") {
  const std::string dir = temp_dir("conv-sub");
  const std::map<std::string, std::string> env{{"RUNARA_STATE_DIR", dir + "/state"}, {"DIGITALOCEAN_TOKEN", ""}};
  struct Case {
    std::vector<std::string> args;
    std::string message;  // after "runara COMMAND: "
  };
  const std::vector<Case> cases = {
      {{"runs", "--limt", "5"}, "unknown option '--limt' (did you mean '--limit'?)"},
      {{"runs", "--limit"}, "--limit needs a value"},
      {{"runs", "--limit="}, "--limit expects a whole number >= 0, got ''"},
      {{"runs", "--json=yes"}, "--json takes no value, got '--json=yes'"},
      {{"runs", "extra"}, "unknown argument 'extra'"},
      {{"compare", "--noies", "1", "a", "b"}, "unknown option '--noies' (did you mean '--noise'?)"},
      {{"compare", "a", "b", "--last"}, "--last needs a value"},
      {{"ls", "--jsno"}, "unknown option '--jsno' (did you mean '--json'?)"},
      {{"ls", "--context"}, "--context needs a value"},
      {{"ls", "--yes"}, "unknown option '--yes'"},  // reap's, not ls's
      {{"reap", "--yse"}, "unknown option '--yse' (did you mean '--yes'?)"},
      {{"reap", "--older-than", "soon"}, "--older-than expects a duration like 90m or 2h, got 'soon'"},
      {{"reap", "--yes=no"}, "--yes takes no value, got '--yes=no'"},
      {{"bench", "http://127.0.0.1:9", "--model"}, "--model needs a value"},
      {{"bench", "http://127.0.0.1:9", "-c"}, "-c needs a value"},
      {{"bench", "http://127.0.0.1:9", "--saturate=1"}, "--saturate takes no value, got '--saturate=1'"},
      {{"bench", "--host", "h"}, "--host is vllm bench's; here give the server as URL (or --base-url http://HOST:PORT)"},
      {{"serve-fake-do", "--port"}, "--port needs a value"},
      {{"serve-fake-llm", "--tokenise", "yes"}, "unknown option '--tokenise' (did you mean '--tokenize'?)"},
      {{"plan", "--budgte", "5", "x.lua"}, "unknown option '--budgte' (did you mean '--budget'?) (see runara --help)"},
  };
  for (const Case& c : cases) {
    const ChildResult r = run_runara(c.args, 10, env);
    INFO(c.args.front() << " " << c.args[1] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "runara " + c.args.front() + ": " + c.message + "\n"));
    CHECK(r.out.empty());
  }
  for (const std::string command : {"runs", "compare", "ls", "reap", "bench", "serve-fake-do", "serve-fake-llm"}) {
    const ChildResult help = run_runara({command, "--help"}, 10, env);
    INFO(command);
    CHECK(help.exit_code == 0);
    CHECK(help.out.rfind("usage: runara ", 0) == 0);
    CHECK(contains(help.out, "runara " + command + " "));
    CHECK(help.err.empty());
  }
}

TEST_CASE("runara's own options: --flag= is the empty value, switches together, a value attached", "[cli][conventions]") {
  const std::string out = temp_dir("conv-own");
  // "--context=" is refused as empty, not given the next argument as its value.
  const ChildResult empty = run_runara({"--context=", "-e", "print(1)"});
  CHECK(empty.exit_code == 2);
  CHECK(contains(empty.err, "runara: --context needs a doctl auth context name"));
  const ChildResult together = run_runara({"--out", out + "/a", "-qe", "print(7)"});
  INFO(together.err);
  CHECK(together.exit_code == 0);
  CHECK(together.out == "7\n");
  const ChildResult attached = run_runara({"--out", out + "/b", "-eprint(runara.args[1])", "x"});
  CHECK(attached.exit_code == 0);
  CHECK(attached.out == "x\n");
  // After the script (or -e CODE), an option-looking argument is the script's, untouched.
  const ChildResult script_args = run_runara({"--out", out + "/c", "-e", "print(table.concat(runara.args, ' '))", "--",
                                              "--out=", "[a,b]", "-qe"});
  INFO(script_args.err);
  CHECK(script_args.exit_code == 0);
  CHECK(script_args.out == "--out= [a,b] -qe\n");
  const ChildResult missing = run_runara({"--out", out + "/d", "-e"});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "runara: -e needs a value"));
}

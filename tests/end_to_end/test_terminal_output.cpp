// Terminal and log injection (issue 25), end to end: text from a script, a machine or a server
// reaches the terminal and run.log made visible, and cannot start a forged "[   0.001] ..." log
// line (the rule itself, base/text.hpp's visible(): tests/unit/test_terminal_text.cpp). The real
// `runara` on attack scripts: OSC 52 clipboard writes, title sets, clear screen, CR overwrites,
// C1 controls, forged log lines through runara.log, a task's error, a chunk name and the final
// error; secrets still masked, with and without escapes around or inside them. The same attacks
// through s:exec / s:spawn output, a failed command's stderr and an ssh session's name run
// against a real sshd on loopback (tests/support/sshd_fixture.*).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "sshd_fixture.hpp"
#include "test_text.hpp"

using runara::test::contains;
using runara::test::read_all;

namespace {

// Bytes a terminal obeys: ESC, BEL, CR, backspace, DEL, C1 CSI (UTF-8 and raw).
bool has_raw_control(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == 0x9b) return true;
  }
  return false;
}

// Whether a line of `text` starts with the attack's forged log line.
bool forged_line(const std::string& text) {
  const std::string forged = "[   0.001] FORGED";
  return text.rfind(forged, 0) == 0 || contains(text, "\n" + forged);
}

// Secrets::mask_for for a value longer than "<secret NAME>".
std::string mask(const std::string& name, const std::string& value) {
  return "<secret " + name + std::string(value.size() - name.size() - 9, '*') + ">";
}

}  // namespace

TEST_CASE("print, runara.log, errors and tracebacks reach the terminal and run.log made visible, no forged line",
          "[cli][terminal]") {
  const std::string dir = runara::test::temp_dir("terminal-text");
  const std::string out = dir + "/out";
  const std::string name = "TS";
  const std::string value = "tok-term-7c1d-SENSITIVE";
  const std::string script = runara::test::write_temp_file(dir, "attack.lua", R"lua(
local v = runara.args[1]
print("clipboard \27]52;c;ZXZpbA==\7 title \27]0;pwned\7 clear \27[2J\27[H end")
print("progress 50%\rOVERWRITTEN c1 \194\155" .. "2J raw \155" .. "2J")
print("around \27" .. v .. "\27 secret")
runara.log("x\n[   0.001] FORGED by runara.log \27[31m")
runara.log("cr\r[   0.001] FORGED over the stamp")
runara.log("creating droplet forged (s-1vcpu-1gb in nyc1, image debian-12-x64, $0.01/h)")
local t = runara.spawn(function() error("task\n[   0.001] FORGED by a task's error", 0) end)
runara.sleep(0.05)
local f = load("error('from a chunk')", "=chunk\n[   0.001] FORGED by a chunk name")
local ok = pcall(f)
f()
)lua");
  const auto r = runara::test::run_runara({"--max-runtime", "30", "--out", out, "--secret", name, script, value}, 30,
                                          {{name, value}});
  const std::string log = read_all(out + "/run.log");
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err << "\nrun.log:\n" << log);
  CHECK(r.exit_code == 1);
  for (const std::string* text : {&r.out, &r.err, &log}) {
    CHECK_FALSE(has_raw_control(*text));
    CHECK_FALSE(forged_line(*text));
    CHECK_FALSE(contains(*text, value));
  }
  // What the attacks show instead: the escapes spelled out, on the line they were printed on.
  CHECK(contains(r.out, "clipboard ^[]52;c;ZXZpbA==^G title ^[]0;pwned^G clear ^[[2J^[[H end\n"));
  CHECK(contains(r.out, "progress 50%^MOVERWRITTEN c1 M-^[2J raw M-^[2J\n"));
  CHECK(contains(r.out, "around ^[" + mask(name, value) + "^[ secret\n"));
  // runara.log's lines say they are the script's: "script: " after the stamp, which only runara
  // writes, so none passes for runara's own ("creating droplet ..." is what `runara plan` once
  // counted as a machine).
  CHECK(contains(r.err, "] script: x\n           [   0.001] FORGED by runara.log ^[[31m\n"));
  CHECK(contains(log, "] script: x\n           [   0.001] FORGED by runara.log ^[[31m\n"));
  CHECK(contains(log, "] script: cr^M[   0.001] FORGED over the stamp\n"));
  CHECK(contains(log, "] script: creating droplet forged (s-1vcpu-1gb"));
  CHECK(contains(r.err, "] script: creating droplet forged (s-1vcpu-1gb"));
  CHECK_FALSE(contains(log, "] creating droplet"));
  CHECK(contains(log, "task\n           [   0.001] FORGED by a task's error"));
  // The final error: run.log keeps it one entry; the terminal indents it under "runara: ".
  CHECK(contains(log, "chunk\n           [   0.001] FORGED by a chunk name:1: from a chunk"));
  CHECK(contains(r.err, "runara: chunk\n        [   0.001] FORGED by a chunk name:1: from a chunk"));
}

TEST_CASE("a secret that only appears once escapes are written out is masked too", "[cli][terminal]") {
  const std::string dir = runara::test::temp_dir("terminal-text");
  const std::string out = dir + "/out";
  const std::string name = "TC";
  const std::string value = "pass^[word-caret-SENSITIVE";
  const std::string script = runara::test::write_temp_file(dir, "caret.lua",
      "print('pass\\27word-caret-SENSITIVE')\nrunara.log('pass\\27word-caret-SENSITIVE')\n");
  const auto r = runara::test::run_runara({"--out", out, "--secret", name, script}, 30, {{name, value}});
  const std::string log = read_all(out + "/run.log");
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err << "\nrun.log:\n" << log);
  CHECK(r.exit_code == 0);
  for (const std::string* text : {&r.out, &r.err, &log}) {
    CHECK_FALSE(contains(*text, value));
    CHECK(contains(*text, mask(name, value)));  // as long as the value
  }
}

TEST_CASE("runara plan prints a script's error and the grants it asked for made visible", "[cli][terminal]") {
  const std::string dir = runara::test::temp_dir("terminal-text");
  const std::string script = runara::test::write_temp_file(dir, "plan_attack.lua",
      "pcall(os.getenv, 'GRANT\\27]52;c;ZXZpbA==\\7')\n"
      "error('stopped \\27]0;title\\7 \\27[2J')\n");
  const auto r = runara::test::run_runara({"plan", script}, 60);
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
  CHECK(r.exit_code == 1);  // the script failed: the plan says until where it got
  CHECK(contains(r.out, "until: "));
  CHECK(contains(r.out, "stopped ^[]0;title^G ^[[2J"));
  CHECK(contains(r.out, "--allow-env GRANT^[]52;c;ZXZpbA==^G"));
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find('\a') == std::string::npos);
}

TEST_CASE("ssh: machine lines, a session's name and a failed command's stderr reach the terminal and run.log made "
          "visible, no forged line", "[ssh][ssh_lua][terminal]") {
  runara::test::SshdFixture sshd;
  const std::string base = runara::test::temp_dir("terminal-ssh");
  const std::string home = base + "/home", out = base + "/out", script = base + "/script/t.lua";
  std::filesystem::create_directories(home + "/.ssh");
  std::filesystem::create_directories(base + "/script");
  const std::string host = "127.0.0.1:" + std::to_string(sshd.port());
  std::ofstream(home + "/.ssh/known_hosts") << "[127.0.0.1]:" << sshd.port() << " " << read_all(sshd.dir() + "/host_key.pub");
  {
    std::ofstream f(script);
    f << "local s = ssh.connect('" << host << "', { name = 'm\\27]0;pwned\\7\\n[   0.001] FORGED by a name' })\n"
      << R"lua(
print("name", s.name)
s:exec([=[printf '\033]52;c;Y3VybA==\007 clip\n[   0.001] FORGED by exec\n'; printf 'err \033[2J\r[   0.001] FORGED by stderr\n' >&2]=])
local p = s:spawn([=[printf 'spawned \033]0;title\007\n\033[1A\033[2K[   0.001] FORGED by spawn\n']=])
for line in p:lines() do print("script sees", #line) end
p:wait()
s:exec([=[printf 'tail \033]0;t\007\n[   0.001] FORGED by a stderr tail\n' >&2; exit 3]=])
)lua";
  }
  const auto r = runara::test::run_runara(
      {"--out", out, "--allow-host", host, "--ssh-key", sshd.user_key_path(), script}, 60, {{"HOME", home}});
  const std::string log = read_all(out + "/run.log");
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err << "\nrun.log:\n" << log);
  CHECK(r.exit_code == 1);
  for (const std::string* text : {&r.out, &r.err, &log}) {
    CHECK_FALSE(has_raw_control(*text));
    CHECK_FALSE(forged_line(*text));
  }
  const std::string name = "m^[]0;pwned^G^J[   0.001] FORGED by a name";
  CHECK(contains(r.out, "name\t" + name + "\n"));
  CHECK(contains(r.out, "[" + name + "] ^[]52;c;Y3VybA==^G clip\n[" + name + "] [   0.001] FORGED by exec\n"));
  CHECK(contains(r.out, "[" + name + "] err ^[[2J^M[   0.001] FORGED by stderr\n"));
  CHECK(contains(r.out, "[" + name + "] ^[[1A^[[2K[   0.001] FORGED by spawn\n"));
  CHECK(contains(r.out, "script sees\t18\n"));  // the script itself gets the machine's bytes as they are
  CHECK(contains(r.err, "ssh: connected to " + name));
  CHECK(contains(log, "ssh: connected to " + name));
  CHECK(contains(r.err, "stderr ends with:\n        tail ^[]0;t^G\n        [   0.001] FORGED by a stderr tail"));
  CHECK(contains(log, "stderr ends with:\n           tail ^[]0;t^G\n           [   0.001] FORGED by a stderr tail"));
}

// The interactive REPL of `runara`, driven through a pseudo-terminal as a user would: values
// are printed, tables pretty-printed, incomplete input continues on the next line, errors do
// not end the session, Ctrl-C interrupts the running statement only, Ctrl-D leaves (exit 0),
// history persists under $HOME, and `-i SCRIPT` keeps the script's globals.
#include <catch2/catch.hpp>

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "exec_image.hpp"
#include "runara/runtime.hpp"
#include "test_text.hpp"

using runara::test::now_s;
using runara::test::read_all;

namespace {



// `runara ARGS...` on the slave side of a pseudo-terminal, in its own session with the
// terminal as its controlling terminal (so Ctrl-C written to the master becomes a SIGINT).
class PtyChild {
 public:
  PtyChild(std::vector<std::string> args, const std::string& home, const std::string& cwd) {
    args.insert(args.begin(), RUNARA_BINARY);
    // History must go under $HOME, so XDG_STATE_HOME is removed.
    runara::test::ExecImage image(std::move(args), {{"HOME", home}, {"XDG_STATE_HOME", std::nullopt}, {"TERM", "xterm"}});
    winsize size{};
    size.ws_row = 24;
    size.ws_col = 200;  // wide: no line wrapping in what we read back
    pid_ = forkpty(&master_, nullptr, nullptr, &size);
    if (pid_ < 0) throw std::runtime_error("forkpty failed");
    if (pid_ == 0) {  // only async-signal-safe calls until exec (see exec_image.hpp)
      if (chdir(cwd.c_str()) != 0) _exit(127);
      execve(image.path(), image.argv(), image.envp());
      _exit(127);
    }
  }

  ~PtyChild() {
    if (!exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) close(master_);
  }

  // Keys typed right after a prompt appears can reach the terminal before the line editor
  // has switched it to raw mode (a Ctrl-D then gets lost): wait until it has, as the terminal
  // itself says (the master side reads the pty's settings).
  void send(const std::string& keys) {
    wait_for_mode(true);
    write_keys(keys);
  }
  // Ctrl-C while a statement runs: the line editor has given the terminal back (canonical mode,
  // where Ctrl-C becomes SIGINT) once the statement started.
  void interrupt() {
    wait_for_mode(false);
    write_keys("\x03");
  }

  // Ctrl-D at an empty prompt; returns the exit status (-1 if it did not exit).
  int leave() {
    send("\x04");
    int code = wait_exit(8);
    if (code == -1) {  // lost in the raw-mode switch after all: once more
      send("\x04");
      code = wait_exit(12);
    }
    return code;
  }
  // A line as typed, ended with the Enter key.
  void type_line(const std::string& line) { send(line + "\r"); }

  // Waits until `text` appears in the output after what earlier expects consumed; consumes
  // up to its end. False if it did not appear within `timeout_s`.
  bool expect(const std::string& text, double timeout_s = 10) {
    const double until = now_s() + timeout_s;
    while (true) {
      const std::size_t at = output_.find(text, cursor_);
      if (at != std::string::npos) {
        cursor_ = at + text.size();
        return true;
      }
      if (now_s() > until || !pump(0.05)) return false;
    }
  }

  // Waits (at most 5 s, reading the output meanwhile) until the terminal is in the line editor's
  // raw mode (`raw`) or back in canonical mode.
  void wait_for_mode(bool raw) {
    const double until = now_s() + 5;
    while (now_s() < until) {
      termios t{};
      if (tcgetattr(master_, &t) == 0 && ((t.c_lflag & ICANON) == 0) == raw) return;
      pump(0.005);
    }
  }
  void write_keys(const std::string& keys) {
    const ssize_t n = ::write(master_, keys.data(), keys.size());
    (void)n;
  }

  // Everything after what has been consumed (for failure messages).
  std::string unread() const { return output_.substr(cursor_); }
  const std::string& output() const { return output_; }

  // Waits for the exit status (-1 on timeout), draining the terminal meanwhile.
  int wait_exit(double timeout_s = 20) {
    const double until = now_s() + timeout_s;
    while (now_s() < until) {
      pump(0.02);
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        while (pump(0)) {
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
    return -1;
  }

 private:
  // Reads what is available; false once the terminal is closed (the child has gone).
  bool pump(double timeout_s) {
    pollfd fd{master_, POLLIN, 0};
    const int ready = poll(&fd, 1, static_cast<int>(timeout_s * 1000));
    if (ready <= 0) return ready == 0;
    char buf[4096];
    const ssize_t n = read(master_, buf, sizeof buf);
    if (n <= 0) return false;  // EIO: the slave side is closed
    output_.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  int master_ = -1;
  bool exited_ = false;
  std::string output_;
  std::size_t cursor_ = 0;
};

struct Session {
  std::string dir = runara::test::temp_dir("repl");
  std::string home = dir + "/home";
  std::string history = home + "/.local/state/runara/history";
  Session() { std::filesystem::create_directories(home); }
};

}  // namespace

TEST_CASE("the REPL prints values, tables, multi-line results and errors", "[repl]") {
  Session s;
  PtyChild repl({"--max-runtime", "60", "--out", s.dir + "/out"}, s.home, s.dir);
  REQUIRE(repl.expect("runara> "));

  repl.type_line("1+1");
  CHECK(repl.expect("1+1\r\n2\r\n"));
  REQUIRE(repl.expect("runara> "));

  repl.type_line("{a = 1, b = {2, 3}, name = 'gpu'}");
  CHECK(repl.expect("{\r\n"));
  REQUIRE(repl.expect("runara> "));
  {
    const std::string& all = repl.output();
    INFO(all);
    CHECK(all.find("  a = 1,\r\n") != std::string::npos);
    CHECK(all.find("  name = \"gpu\",\r\n") != std::string::npos);
    CHECK(all.find("  b = {\r\n") != std::string::npos);
    CHECK(all.find("    [1] = 2,\r\n") != std::string::npos);
    CHECK(all.find("    [2] = 3,\r\n") != std::string::npos);
  }

  // multi-line input: the prompt changes until the chunk is complete
  repl.type_line("function f()");
  CHECK(repl.expect(">> "));
  repl.type_line("return 3");
  CHECK(repl.expect(">> "));
  repl.type_line("end");
  REQUIRE(repl.expect("runara> "));
  repl.type_line("f()");
  CHECK(repl.expect("f()\r\n3\r\n"));
  REQUIRE(repl.expect("runara> "));

  // an error is printed and the session goes on, with its state intact
  repl.type_line("error('kaboom')");
  CHECK(repl.expect("error: "));
  CHECK(repl.expect("kaboom"));
  REQUIRE(repl.expect("runara> "));
  repl.type_line("nosuchfunction()");
  CHECK(repl.expect("error: "));
  REQUIRE(repl.expect("runara> "));
  repl.type_line("f() + 1");
  CHECK(repl.expect("f() + 1\r\n4\r\n"));
  REQUIRE(repl.expect("runara> "));

  INFO(repl.unread());
  CHECK(repl.leave() == 0);  // Ctrl-D
}

TEST_CASE("Ctrl-C interrupts the running statement and the REPL goes on", "[repl]") {
  Session s;
  PtyChild repl({"--max-runtime", "60", "--out", s.dir + "/out"}, s.home, s.dir);
  REQUIRE(repl.expect("runara> "));
  repl.type_line("x = 5");
  REQUIRE(repl.expect("runara> "));

  repl.type_line("runara.sleep(30)");
  REQUIRE(repl.expect("runara.sleep(30)\r\n"));
  const double sent = now_s();
  repl.interrupt();  // Ctrl-C once the statement runs: the terminal sends SIGINT to the REPL
  CHECK(repl.expect("interrupted", 10));
  CHECK(now_s() - sent < 5);
  REQUIRE(repl.expect("runara> "));

  repl.type_line("1+1");
  CHECK(repl.expect("1+1\r\n2\r\n"));
  repl.type_line("x");
  CHECK(repl.expect("x\r\n5\r\n"));  // the session kept its globals
  // a busy statement is interruptible too
  repl.type_line("while true do end");
  REQUIRE(repl.expect("while true do end\r\n"));
  repl.interrupt();
  CHECK(repl.expect("interrupted", 10));
  REQUIRE(repl.expect("runara> "));
  repl.type_line("x + 1");
  CHECK(repl.expect("x + 1\r\n6\r\n"));
  REQUIRE(repl.expect("runara> "));

  INFO(repl.unread());
  CHECK(repl.leave() == 0);
}

TEST_CASE("Ctrl-D leaves with exit 0 and the history is saved under $HOME", "[repl]") {
  Session s;
  {
    PtyChild repl({"--max-runtime", "60", "--out", s.dir + "/out"}, s.home, s.dir);
    REQUIRE(repl.expect("runara> "));
    repl.type_line("1+1");
    CHECK(repl.expect("\r\n2\r\n"));
    repl.type_line("local history_marker = 42");
    REQUIRE(repl.expect("runara> "));
    INFO(repl.unread());
    CHECK(repl.leave() == 0);
  }
  const std::string history = read_all(s.history);
  INFO("history file " << s.history << ": " << history);
  CHECK(history.find("1+1") != std::string::npos);
  CHECK(history.find("history_marker") != std::string::npos);

  // a second session starts from that history: Up recalls the last line
  PtyChild again({"--max-runtime", "60", "--out", s.dir + "/out2"}, s.home, s.dir);
  REQUIRE(again.expect("runara> "));
  again.send("\x1b[A");  // Up arrow
  CHECK(again.expect("history_marker"));
  again.send("\x15");  // Ctrl-U: drop the recalled line
  CHECK(again.leave() == 0);
}

TEST_CASE("runara -i SCRIPT runs the script, then a REPL that sees its globals", "[repl]") {
  Session s;
  const std::string script = runara::test::write_temp_file(
      s.dir, "setup.lua",
      "answer = 41\n"
      "local hidden = 'local to the script'\n"
      "function greet(name) return 'hello ' .. name end\n"
      "machines = { runara.spawn(function() return 'warm' end):join() }\n"
      "print('setup done')\n");
  PtyChild repl({"--max-runtime", "60", "--out", s.dir + "/out", "-i", script}, s.home, s.dir);
  REQUIRE(repl.expect("setup done"));
  REQUIRE(repl.expect("runara> "));
  repl.type_line("answer + 1");
  CHECK(repl.expect("answer + 1\r\n42\r\n"));
  repl.type_line("greet('gpu')");
  CHECK(repl.expect("\r\n\"hello gpu\"\r\n"));
  repl.type_line("machines[1]");
  CHECK(repl.expect("\r\n\"warm\"\r\n"));
  repl.type_line("hidden");
  CHECK(repl.expect("hidden\r\nnil\r\n"));
  REQUIRE(repl.expect("runara> "));
  INFO(repl.unread());
  CHECK(repl.leave() == 0);
}

// A shared-table DAG (200^8 paths from 9 tables) printed just before a 1 s deadline: the
// printer used to run on past --max-runtime (still printing, nothing shown, after 20 s) and
// towards bad_alloc. Now each table prints once, within 64 KiB, and the session ends at the
// deadline within the watchdog's grace.
TEST_CASE("the REPL prints a shared-table DAG once and stops at --max-runtime", "[repl]") {
  Session s;
  PtyChild repl({"--max-runtime", "1", "--out", s.dir + "/out"}, s.home, s.dir);
  REQUIRE(repl.expect("runara> "));
  const double typed = now_s();
  repl.type_line("local t = {leaf = true} for l = 1, 8 do local n = {} for i = 1, 200 do n[i] = t end t = n end "
                 "runara.sleep(0.7) return t");
  CHECK(repl.expect("<shared table, shown above>", 3));
  CHECK(repl.expect("}\r\nrunara> ", 3));  // the whole value printed, then the prompt
  CHECK(now_s() - typed < 3);
  // Past the deadline, the next input ends the session as the watchdog's stop.
  std::this_thread::sleep_for(std::chrono::duration<double>(std::max(0.0, typed + 1.3 - now_s())));
  repl.type_line("1 + 1");
  CHECK(repl.expect("stopped by the watchdog", 5));
  const int code = repl.wait_exit(5);
  const std::string& all = repl.output();
  INFO(all.substr(all.size() > 1500 ? all.size() - 1500 : 0));
  CHECK(code == 3);
  CHECK(now_s() - typed < 1 + 5);
  CHECK(repl.output().find("stuck") == std::string::npos);
  CHECK(repl.output().size() < 80 * 1024);
}

TEST_CASE("the REPL: completing a table name adds no space before '.', '1 +' continues, tasks show as tasks", "[repl]") {
  Session s;
  PtyChild repl({"--max-runtime", "60", "--out", s.dir + "/out"}, s.home, s.dir);
  REQUIRE(repl.expect("runara> "));
  repl.send("runar\t");  // completes to "runara" (the line editor redraws: escapes between)
  repl.send(".version\r");  // typed right after the completion: "runara .version" would be an error
  CHECK(repl.expect("a.version\r\n"));
  CHECK(repl.expect("\"" + runara::version() + "\"\r\n"));
  REQUIRE(repl.expect("runara> "));
  CHECK(repl.output().find("error:") == std::string::npos);

  repl.type_line("1 +");
  CHECK(repl.expect(">> "));
  repl.type_line("2");
  CHECK(repl.expect("3\r\n"));
  REQUIRE(repl.expect("runara> "));

  repl.type_line("t = runara.spawn(function() runara.sleep(30) end)");
  REQUIRE(repl.expect("runara> "));
  repl.type_line("t");
  CHECK(repl.expect("task "));
  CHECK(repl.expect("runara> "));
  INFO(repl.output());
  CHECK(repl.output().find("userdata") == std::string::npos);
  CHECK(repl.leave() == 0);
}

TEST_CASE("help at the REPL lists the primitives, the modules and where the docs are", "[repl]") {
  Session s;
  PtyChild repl({"--max-runtime", "60", "--out", s.dir + "/out"}, s.home, s.dir);
  REQUIRE(repl.expect("help for help."));
  REQUIRE(repl.expect("runara> "));
  for (const char* ask : {"help", "help()"}) {
    repl.type_line(ask);
    CHECK(repl.expect("Primitives"));
    CHECK(repl.expect("  http_load    fake_server, run\r\n"));
    CHECK(repl.expect("runara.vllm"));
    CHECK(repl.expect("/docs/):\r\n  api.md"));
    REQUIRE(repl.expect("runara> "));
  }
  // A session's own `help` is its own.
  repl.type_line("help = 'mine'");
  REQUIRE(repl.expect("runara> "));
  repl.type_line("help");
  CHECK(repl.expect("help\r\n\"mine\"\r\n"));
  REQUIRE(repl.expect("runara> "));
  INFO(repl.unread());
  CHECK(repl.leave() == 0);
}

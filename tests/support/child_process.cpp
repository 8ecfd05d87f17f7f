#include "test_paths.hpp"
#include "child_process.hpp"
#include "test_processes.hpp"

#include "exec_image.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>
#include <csignal>
#include <iterator>
#include <filesystem>

namespace runara::test {

namespace {
double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// What a hung child was doing, for the failure message: which program (did it get to exec?),
// its state and the kernel function it sleeps in.
std::string where_is(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::string exe(4096, '\0');
  const ssize_t n = readlink((proc + "/exe").c_str(), exe.data(), exe.size() - 1);
  exe.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  std::string wchan = proc_file(proc + "/wchan"), stat = proc_file(proc + "/stat");
  wchan = wchan.substr(0, wchan.find('\n'));
  const auto state_at = stat.rfind(") ");
  const std::string state = state_at == std::string::npos ? "?" : stat.substr(state_at + 2, 1);
  return "running " + (exe.empty() ? std::string("?") : exe) + ", state " + state + ", in " + (wchan.empty() ? "?" : wchan);
}

}  // namespace

ChildProcess::ChildProcess(std::vector<std::string> argv, std::map<std::string, std::string> env,
                           std::string cwd) {
  ExecImage image(std::move(argv), {env.begin(), env.end()});
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) throw std::runtime_error("pipe failed");
  // posix_spawn, not fork: nothing runs in the child before exec (see exec_image.hpp).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);  // dup2 clears close-on-exec
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group: signals reach only it
  posix_spawnattr_setpgroup(&attr, 0);
  started_ = now_s();
  const int rc = posix_spawn(&pid_, image.path(), &actions, &attr, image.argv(), image.envp());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  in_ = in[1];
  out_ = out[0];
  err_ = err[0];
  if (rc != 0) {
    for (int fd : {in_, out_, err_}) close(fd);
    throw std::runtime_error(std::string("cannot start ") + image.path() + ": " + std::strerror(rc));
  }
  fcntl(out_, F_SETFL, O_NONBLOCK);
  fcntl(err_, F_SETFL, O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  if (!done_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  for (int fd : {in_, out_, err_}) {
    if (fd >= 0) close(fd);
  }
}

void ChildProcess::write_stdin(const std::string& data) {
  const ssize_t n = ::write(in_, data.data(), data.size());
  (void)n;
}

void ChildProcess::close_stdin() {
  if (in_ >= 0) close(in_);
  in_ = -1;
}

void ChildProcess::signal(int signal_number) { kill(pid_, signal_number); }

void ChildProcess::pump(double timeout_s) {
  pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
  poll(fds, 2, static_cast<int>(timeout_s * 1000));
  char buf[65536];
  for (auto [fd, into] : {std::pair{out_, &result_.out}, std::pair{err_, &result_.err}}) {
    while (true) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) break;
      into->append(buf, static_cast<std::size_t>(n));
    }
  }
}

bool ChildProcess::wait_for_output(const std::string& text, double timeout_s) {
  const double until = now_s() + timeout_s;
  while (now_s() < until) {
    if (result_.out.find(text) != std::string::npos || result_.err.find(text) != std::string::npos) return true;
    pump(0.02);
  }
  return false;
}

ChildResult ChildProcess::wait(double timeout_s) {
  if (done_) return result_;
  const double until = now_s() + timeout_s;
  int status = 0;
  while (true) {
    pump(0.01);
    rusage usage{};
    const pid_t r = wait4(pid_, &status, WNOHANG, &usage);
    if (r == pid_) result_.max_rss_kb = usage.ru_maxrss;
    if (r == pid_) break;
    if (now_s() > until) {
      result_.timed_out = true;
      result_.err += "\n[test harness: still running after " + std::to_string(static_cast<int>(now_s() - started_)) +
                     " s, killed; it was " + where_is(pid_) + "]\n";
      kill(pid_, SIGKILL);
      rusage usage{};
      wait4(pid_, &status, 0, &usage);
      result_.max_rss_kb = usage.ru_maxrss;
      break;
    }
  }
  result_.seconds = now_s() - started_;
  pump(0);
  done_ = true;
  result_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result_;
}

ChildResult run_runara(std::vector<std::string> args, double timeout_s,
                       std::map<std::string, std::string> env, const std::string& stdin_data) {
  args.insert(args.begin(), RUNARA_BINARY);
  ChildProcess child(args, env);
  if (!stdin_data.empty()) child.write_stdin(stdin_data);
  child.close_stdin();
  return child.wait(timeout_s);
}

namespace {

// The temporary folders of this test process, removed when it exits (RUNARA_KEEP_TEST_DIRS=1
// keeps them, to look at after a failure). A run's guardian outlives the run: it still reads the
// ledger in its state folder (a runtime that ended normally) or retries an API the test has
// already stopped (a runtime the test killed). Removing the folder under it made it believe its
// run had not torn down and hold the test's output open for minutes. So the folders go only once
// no guardian names one of them: each is given a few seconds to finish, then killed.
struct TempDirs {
  std::vector<std::string> dirs;

  // Guardians whose command line names one of the folders, as an argument or a path below it.
  std::vector<pid_t> guardians() const {
    std::vector<pid_t> found;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::string args = proc_file(entry.path() / "cmdline");
      if (args.find("__guardian") == std::string::npos) continue;
      for (const auto& dir : dirs) {
        if (args.find(dir + "/") != std::string::npos || args.find(dir + '\0') != std::string::npos) {
          found.push_back(std::stoi(name));
          break;
        }
      }
    }
    return found;
  }

  // Gives the guardians naming `dirs` a few seconds to finish, kills those left, removes `dirs`.
  void remove() {
    if (dirs.empty() || std::getenv("RUNARA_KEEP_TEST_DIRS")) return;
    const double until = now_s() + 5;
    while (!guardians().empty() && now_s() < until) usleep(20000);
    for (pid_t pid : guardians()) kill(pid, SIGKILL);
    std::error_code ignored;
    for (const auto& dir : dirs) std::filesystem::remove_all(dir, ignored);
    dirs.clear();
  }
  ~TempDirs() { remove(); }
};

TempDirs& temp_dirs() {
  static TempDirs all;
  return all;
}

}  // namespace

std::string temp_dir(const std::string& tag) {
  std::string pattern = "/tmp/runara-test-" + tag + "-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  temp_dirs().dirs.push_back(pattern);
  return pattern;
}

void remove_temp_dir(const std::string& dir) {
  auto& all = temp_dirs().dirs;
  const auto found = std::find(all.begin(), all.end(), dir);
  if (found == all.end()) throw std::logic_error("remove_temp_dir: " + dir + " was not made by temp_dir");
  all.erase(found);
  TempDirs one{{dir}};
  one.remove();
}

std::string write_temp_file(const std::string& dir, const std::string& name, const std::string& content) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

}  // namespace runara::test

#include "sim/sim_sweeper.hpp"

#include "base/watcher_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <vector>


namespace runara::sim {

namespace {

std::string read_proc(const std::string& pid, const char* what) {
  const int fd = ::open(("/proc/" + pid + "/" + what).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};  // gone, or another user's
  std::string text;
  char buf[16384];
  ssize_t n;
  // Environments and command lines are small; a cap keeps a hostile one from costing much.
  while (text.size() < (1u << 20) && (n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return text;
}

// True when `environ` (NUL-separated) holds `entry` as one whole item.
bool holds(const std::string& environ_text, const std::string& entry) {
  for (size_t at = 0; at < environ_text.size();) {
    const size_t end = environ_text.find('\0', at);
    const size_t len = (end == std::string::npos ? environ_text.size() : end) - at;
    if (len == entry.size() && environ_text.compare(at, len, entry) == 0) return true;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return false;
}

pid_t parent_of(const std::string& pid) {
  const std::string stat = read_proc(pid, "stat");
  const size_t paren = stat.rfind(") ");
  if (paren == std::string::npos || paren + 4 >= stat.size()) return 0;
  return static_cast<pid_t>(std::atol(stat.c_str() + paren + 4));  // after ") S "
}

// sshd rewrites its own environment and command line (setproctitle) for its process title, so
// an sshd is found by the folder named in its title ("sshd: ... -f DIR/sshd_config [listener]")
// and its per-connection children by their parent.
int kill_pass(const std::string& entry, const std::string& folder) {
  DIR* proc = ::opendir("/proc");
  if (!proc) return 0;
  const pid_t self = ::getpid();
  std::multimap<pid_t, pid_t> children;
  std::vector<pid_t> marked;
  while (dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    const pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
    if (pid == self) continue;
    children.emplace(parent_of(e->d_name), pid);
    const bool ours = holds(read_proc(e->d_name, "environ"), entry) ||
                      (!folder.empty() && read_proc(e->d_name, "cmdline").find(folder + "/") != std::string::npos);
    if (ours) marked.push_back(pid);
  }
  ::closedir(proc);
  std::set<pid_t> doomed;
  while (!marked.empty()) {
    const pid_t p = marked.back();
    marked.pop_back();
    if (!doomed.insert(p).second) continue;
    for (auto [it, end] = children.equal_range(p); it != end; ++it) marked.push_back(it->second);
  }
  int killed = 0;
  for (pid_t p : doomed)
    if (p != self && ::kill(p, SIGKILL) == 0) ++killed;
  return killed;
}

std::string flag(int argc, char** argv, const char* name) {
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return "";
}

}  // namespace

int kill_marked_processes(const std::string& entry, const std::string& folder) {
  int total = 0;
  // Killed processes linger as zombies (their environ reads empty) and may have forked a child
  // in between: scan again until a pass finds nobody, for a bounded while.
  for (int pass = 0; pass < 50; ++pass) {
    const int n = kill_pass(entry, folder);
    total += n;
    if (n == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return total;
}

std::unique_ptr<SimSweeper> SimSweeper::start(const std::string& executable, const std::string& root_dir,
                                              const std::string& entry, std::string& error) {
  const auto watcher = start_watcher({executable, "__sim_sweeper", "--dir", root_dir, "--entry", entry}, 0, error);
  if (!watcher) {
    error = "simulated cloud: cannot start its sweeper (" + executable + "): " + error;
    return nullptr;
  }
  return std::unique_ptr<SimSweeper>(new SimSweeper(watcher->pid, watcher->pipe_fd));
}

SimSweeper::~SimSweeper() {
  ::close(fd_);
  int status = 0;
  // It sweeps (nothing is left by then) and removes the folder: quick. Waited so no zombie stays.
  ::waitpid(pid_, &status, 0);
}

int sim_sweeper_main(int argc, char** argv) {
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  const std::string dir = flag(argc, argv, "--dir"), entry = flag(argc, argv, "--entry");
  if (dir.empty() || entry.find('=') == std::string::npos) {
    std::fprintf(stderr, "runara __sim_sweeper is started by runara --sim itself\n");
    return 2;
  }
  char byte;
  for (;;) {  // until runara closes the pipe or dies; nothing is ever written to it
    const ssize_t n = ::read(0, &byte, 1);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  kill_marked_processes(entry, dir);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return 0;
}

}  // namespace runara::sim

#include "base/process_identity.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace runara {

namespace {

// /proc files are small (a stat line is under 1 KiB); one bounded read is enough.
std::string read_small(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buffer[4096];
  ssize_t n;
  do n = ::read(fd, buffer, sizeof buffer);
  while (n < 0 && errno == EINTR);
  ::close(fd);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

std::string current_boot_id() {
  std::string id = read_small("/proc/sys/kernel/random/boot_id");
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

// The state (field 3) and the start time (field 22) of a /proc/PID/stat line. The command
// (field 2, in parentheses) may hold spaces and ") ", so the fields are counted after its last
// closing parenthesis.
bool parse_stat(const std::string& stat, char& state, std::uint64_t& start_ticks) {
  const std::size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return false;
  std::size_t at = paren + 1;
  for (int field = 3; field <= 22; ++field) {
    while (at < stat.size() && stat[at] == ' ') ++at;
    if (at >= stat.size()) return false;
    if (field == 3) state = stat[at];
    if (field == 22) {
      char* end = nullptr;
      start_ticks = std::strtoull(stat.c_str() + at, &end, 10);
      return end != stat.c_str() + at;
    }
    while (at < stat.size() && stat[at] != ' ') ++at;
  }
  return false;
}

}  // namespace

ProcessIdentity this_process() {
  ProcessIdentity self = process_identity(static_cast<int>(::getpid()));
  self.pid = static_cast<int>(::getpid());  // even where /proc says nothing
  return self;
}

ProcessIdentity process_identity(int pid) {
  if (pid <= 0) return {};
  const std::string stat = read_small("/proc/" + std::to_string(pid) + "/stat");
  char state = 0;
  std::uint64_t ticks = 0;
  if (!stat.empty() && parse_stat(stat, state, ticks)) {
    if (state == 'Z' || state == 'X') return {};  // ended: its parent has not collected it yet
    return {pid, ticks, current_boot_id()};
  }
  // /proc works but has no such process: gone. No /proc to ask: whether the pid exists at all.
  if (!read_small("/proc/self/stat").empty()) return {};
  if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) return {pid, 0, ""};
  return {};
}

bool still_running(const ProcessIdentity& recorded) {
  if (recorded.pid <= 0) return false;
  const ProcessIdentity now = process_identity(recorded.pid);
  if (now.pid == 0) return false;
  if (!recorded.boot_id.empty() && !now.boot_id.empty() && recorded.boot_id != now.boot_id) return false;
  return recorded.start_ticks == 0 || now.start_ticks == 0 || recorded.start_ticks == now.start_ticks;
}

}  // namespace runara

#include "ssh/session_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include "base/run_output.hpp"

namespace runara::ssh {

std::string log_file_name(const std::string& name) {
  std::string out;
  for (char c : name.substr(0, 100)) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return out.empty() || out[0] == '.' ? "_" + out : out;
}

SessionLog::~SessionLog() {
  flush();
  if (fd_ >= 0) ::close(fd_);
}

void SessionLog::open(const RunHooks& hooks, const std::string& name) {
  if (fd_ >= 0) return;
  hooks_ = &hooks;
  std::string error;
  auto dir = hooks.open_out_dir();
  if (dir) {
    fd_ = open_beneath(*dir, "ssh/" + log_file_name(name) + ".log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, error);
    ::close(*dir);
  } else {
    error = dir.error();
  }
  if (fd_ < 0) hooks.log("ssh: cannot write ssh/" + log_file_name(name) + ".log: " + error);
}

void SessionLog::line(std::string_view text) {
  if (fd_ < 0) return;
  buffer_ += hooks_->redact(text);
  buffer_ += '\n';
  if (buffer_.size() >= (64u << 10)) flush();
}

void SessionLog::flush() {
  std::size_t at = 0;
  while (fd_ >= 0 && at < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + at, buffer_.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

}  // namespace runara::ssh

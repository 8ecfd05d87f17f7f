#include "ssh/remote_process.hpp"

#include <algorithm>

#include "ssh/machine_session.hpp"

namespace runara::ssh {

namespace {

constexpr std::size_t kQueueMax = 4u << 20;   // :lines() backlog (queued_line_cost) before the oldest lines go
constexpr std::size_t kCheckTail = 2u << 10;  // stderr quoted when a checked command fails

}  // namespace

std::size_t queued_line_cost(const std::string& line) {
  constexpr std::size_t kMallocOverhead = 16;  // glibc: an 8-byte header, blocks rounded to 16
  static const std::size_t kInline = std::string().capacity();
  return sizeof(std::string) + (line.capacity() > kInline ? line.capacity() + 1 + kMallocOverhead : 0);
}

std::string command_label(const std::string& command) {
  std::string first = command.substr(0, command.find('\n'));
  if (first.size() > 80) first = first.substr(0, 77) + "...";
  return first + (first.size() < command.size() && command.find('\n') != std::string::npos ? " ..." : "");
}

std::string RemoteProcess::stdout_so_far() const { return done_ ? result_.stdout_tail : exec_ ? exec_->stdout_tail() : ""; }

std::string RemoteProcess::stderr_so_far() const { return done_ ? result_.stderr_tail : exec_ ? exec_->stderr_tail() : ""; }

void RemoteProcess::kill(const std::string& signal) {
  if (exec_ && exec_->running()) exec_->kill(signal);
}

std::optional<std::string> RemoteProcess::take_line() {
  if (lines_.empty()) return std::nullopt;
  const std::size_t cost = queued_line_cost(lines_.front());
  std::string line = std::move(lines_.front());
  lines_.pop_front();
  queued_bytes_ -= cost;
  memory_.shrink(cost);
  return line;
}

Status RemoteProcess::outcome(bool check) const {
  if (!result_.error.empty()) return Error{"`" + label_ + "`: " + result_.error};
  if (!memory_error_.empty()) return Error{"`" + label_ + "` was stopped: " + memory_error_};
  if (!check) return {};
  const auto& r = result_;
  std::string what;
  if (r.timed_out) what = "timed out (its process group was killed with SIG" + r.signal + ")";
  else if (!r.signal.empty()) what = "was killed by SIG" + r.signal;
  else if (r.exit_code.value_or(-1) != 0) what = "exited with code " + std::to_string(r.exit_code.value_or(-1));
  else return {};
  std::string tail = r.stderr_tail.size() > kCheckTail ? "..." + r.stderr_tail.substr(r.stderr_tail.size() - kCheckTail)
                                                       : r.stderr_tail;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  return Error{"`" + label_ + "` " + what + (tail.empty() ? " (no stderr)" : "; stderr ends with:\n" + tail)};
}

void RemoteProcess::forget_result() {
  result_ = {};
  memory_.reset();
}

void RemoteProcess::stop_for_memory(std::string why) {
  memory_error_ = std::move(why);
  kill("TERM");
}

void RemoteProcess::count(int stream, std::size_t bytes) {
  if (!memory_error_.empty()) return;
  const std::size_t add = std::min(bytes, kOutputTail - std::min(kOutputTail, counted_[stream]));
  counted_[stream] += add;
  if (add == 0) return;
  if (Status taken = memory_.grow(add, "ssh output of `" + label_ + "`"); !taken) stop_for_memory(taken.error());
}

void RemoteProcess::on_line(int stream, std::string_view line) {
  if (session_) {
    // runara's own lines in ssh/<name>.log start with "$ " (a command) or "# " (its ending, a
    // transfer); a machine's line that starts so is indented, so it cannot pass for one to a
    // reader of the log.
    const bool looks_own = !line.empty() && (line[0] == '$' || line[0] == '#');
    if (stream == 0) session_->log().line(looks_own ? " " + std::string(line) : std::string(line));
    else session_->log().line("[stderr] " + std::string(line));
    if (!quiet_) hooks_->print("[" + session_->name() + "] " + std::string(line) + "\n");
  }
  count(stream, line.size() + 1);
  if (stream != 0 || kind_ != ProcessKind::spawn || !memory_error_.empty()) return;
  // Charged at what the line costs in memory, not its bytes (an empty line is not free), so the
  // backlog's bound bounds memory.
  const std::size_t cost = queued_line_cost(lines_.emplace_back(line));
  queued_bytes_ += cost;
  if (!memory_.grow(cost, "ssh output of `" + label_ + "`"))
    stop_for_memory("ssh: the :lines() backlog of `" + label_ + "` would pass --max-memory");
  while (queued_bytes_ > kQueueMax && lines_.size() > 1) {
    take_line();
    if (dropped_lines_++ == 0)
      hooks_->log("ssh: `" + label_ + "`: :lines() is not keeping up; dropping the oldest lines (all are in the log)");
  }
  wake();
}

void RemoteProcess::finished(const ExecResult& r) {
  done_ = true;
  result_ = r;
  if (session_ && kind_ != ProcessKind::internal) {
    session_->log().line("# `" + label_ + "` " +
                         (r.exit_code ? "exited with code " + std::to_string(*r.exit_code)
                                      : r.signal.empty() ? "failed: " + r.error : "was killed by SIG" + r.signal) +
                         " after " + std::to_string(r.seconds).substr(0, 6) + " s");
    session_->log().flush();
  }
  wake();
}

// A waiting :lines() or :wait() (or s:exec) gets what it waited for.
void RemoteProcess::wake() {
  if (line_waiter_ && (!lines_.empty() || done_)) {
    auto waiter = std::move(line_waiter_);
    line_waiter_ = nullptr;
    waiter(take_line());
  } else if (exit_waiter_ && done_) {
    auto waiter = std::move(exit_waiter_);
    exit_waiter_ = nullptr;
    waiter();
  }
}

}  // namespace runara::ssh

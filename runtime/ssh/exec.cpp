#include "ssh/exec.hpp"

#include <uv.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace runara::ssh {

namespace {

constexpr std::size_t kReadChunk = 64u << 10;
// Per stream and step: a firehose command cannot keep the loop to itself (fairness, and the
// loop-stall goal); the session comes back for the rest at once.
constexpr std::size_t kReadBudget = 128u << 10;
constexpr std::size_t kMaxHeader = 64;  // the marker line is short; anything longer is output

}  // namespace

Result<std::unique_ptr<SshExec>> SshExec::start(SshSession& session, ExecOptions options, Done done) {
  auto script = preamble(options.command, options.env);
  if (!script) return Error{script.error()};
  if (!session.ready())
    return Error{"exec: the SSH session to " + session.where() + " is not connected" +
                 (session.error().empty() ? "" : " (" + session.error() + ")")};
  return std::unique_ptr<SshExec>(new SshExec(session, std::move(options), std::move(*script), std::move(done)));
}

SshExec::SshExec(SshSession& session, ExecOptions options, std::string preamble, Done done)
    : session_(&session),
      options_(std::move(options)),
      done_(std::move(done)),
      input_(std::move(preamble) + options_.stdin_data),
      out_(options_.tail_bytes, options_.max_line),
      err_(options_.tail_bytes, options_.max_line) {
  options_.stdin_data.clear();  // kept once, in input_
  out_.set_on_line(std::move(options_.on_stdout));
  err_.set_on_line(std::move(options_.on_stderr));
  started_ = now();
  if (options_.timeout_s > 0) term_at_ = started_ + options_.timeout_s;
  id_ = session_->attach(this);
}

SshExec::~SshExec() {
  // Gone mid-open: the session finishes that open (the channel goes with the session).
  auto finish_open = [raw = session_ ? session_->raw() : nullptr] {
    return libssh2_channel_open_session(raw) != nullptr || libssh2_session_last_errno(raw) != LIBSSH2_ERROR_EAGAIN;
  };
  if (session_) session_->detach(id_, phase_ == Phase::Open ? std::function<bool()>(finish_open) : nullptr);
  // A channel still open is freed with its session (libssh2 keeps the list): freeing it here
  // could need the network.
}

double SshExec::now() const { return static_cast<double>(uv_hrtime()) / 1e9; }

SshExec::Step SshExec::step() {
  bool progressed = false;
  if (check_deadlines()) return Step::Progress;  // finished: `this` may be gone
  if (phase_ == Phase::Open) {
    if (!open_channel()) return Step::Blocked;
    progressed = true;
  }
  if (phase_ == Phase::Exec) {
    if (!run_exec()) return Step::Blocked;
    progressed = true;
  }
  if (phase_ == Phase::Run) {
    if (!write_stdin(progressed) || !read_streams(progressed)) return Step::Blocked;
    if (libssh2_channel_eof(channel_) && !progressed) phase_ = Phase::Close;
  }
  if (phase_ == Phase::Close || phase_ == Phase::Free) {
    if (!close_channel()) return progressed ? Step::Progress : Step::Blocked;
    finish();
    return Step::Progress;
  }
  return progressed ? Step::Progress : Step::Blocked;
}

// Each of these returns false when it must wait (EAGAIN) or the exec ended.
bool SshExec::open_channel() {
  if (!session_->take_open_turn(id_)) return false;
  channel_ = libssh2_channel_open_session(session_->raw());
  if (channel_) {
    session_->release_open_turn(id_);
    phase_ = Phase::Exec;
    return true;
  }
  const int rc = libssh2_session_last_errno(session_->raw());
  if (rc == LIBSSH2_ERROR_EAGAIN) return false;
  return failed("cannot open a channel");
}

bool SshExec::run_exec() {
  const int rc = libssh2_channel_exec(channel_, bootstrap_command().c_str());
  if (rc == LIBSSH2_ERROR_EAGAIN) return false;
  if (rc < 0) return failed("the server refused to run the command");
  session_->note_command_started();
  // stdout and stderr stay apart: never merged into one stream.
  libssh2_channel_handle_extended_data2(channel_, LIBSSH2_CHANNEL_EXTENDED_DATA_NORMAL);
  phase_ = Phase::Run;
  return true;
}

bool SshExec::write_stdin(bool& progressed) {
  while (written_ < input_.size()) {
    const ssize_t n = libssh2_channel_write(channel_, input_.data() + written_, input_.size() - written_);
    if (n == LIBSSH2_ERROR_EAGAIN) return true;  // window full: reading may open it
    if (n < 0 && libssh2_channel_eof(channel_)) {
      eof_sent_ = true;  // the command ended without reading all its input: not an error
      written_ = input_.size();
      return true;
    }
    if (n < 0) return failed("writing the command's input");
    written_ += static_cast<std::size_t>(n);
    progressed = true;
  }
  if (options_.hold_stdin && !eof_sent_) {
    std::string().swap(input_);  // written; send_input() adds more
    written_ = 0;
    return true;
  }
  if (!eof_sent_) {
    const int rc = libssh2_channel_send_eof(channel_);
    if (rc == LIBSSH2_ERROR_EAGAIN) return true;
    if (rc < 0) return failed("ending the command's input");
    eof_sent_ = true;
    std::string().swap(input_);  // may hold a large stdin, and secrets
    written_ = 0;
    progressed = true;
  }
  return true;
}

void SshExec::send_input(std::string_view data) {
  if (!options_.hold_stdin || eof_sent_ || phase_ == Phase::Done) return;
  input_.append(data);
  session_->wake();
}

bool SshExec::read_streams(bool& progressed) {
  return read_stream(0, progressed) && read_stream(SSH_EXTENDED_DATA_STDERR, progressed);
}

bool SshExec::read_stream(int stream, bool& progressed) {
  char buf[kReadChunk];
  std::size_t taken = 0;
  while (taken < kReadBudget) {
    const ssize_t n = libssh2_channel_read_ex(channel_, stream, buf, sizeof buf);
    if (n == LIBSSH2_ERROR_EAGAIN || n == 0) return true;
    if (n < 0) return failed(stream == 0 ? "reading the command's stdout" : "reading the command's stderr");
    taken += static_cast<std::size_t>(n);
    progressed = true;
    if (stream == 0) on_stdout_bytes(std::string_view(buf, static_cast<std::size_t>(n)));
    else err_.feed(std::string_view(buf, static_cast<std::size_t>(n)));
  }
  return true;
}

// The first stdout line is the bootstrap's process-group marker, not the command's output.
void SshExec::on_stdout_bytes(std::string_view bytes) {
  if (!header_done_) {
    const std::size_t nl = bytes.find('\n');
    const std::size_t take = nl == std::string_view::npos ? bytes.size() : nl + 1;
    header_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (nl == std::string_view::npos && header_.size() <= kMaxHeader) return;
    header_done_ = true;
    std::string_view line(header_);
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    if (const auto pgid = parse_pgid_marker(line)) {
      pgid_ = *pgid;
      if (!pending_signal_.empty()) send_kill(std::exchange(pending_signal_, std::string()));
    } else {
      out_.feed(header_);  // no marker (an odd shell): it was output after all
    }
    std::string().swap(header_);
  }
  if (!bytes.empty()) out_.feed(bytes);
}

bool SshExec::close_channel() {
  if (phase_ == Phase::Close) {
    int rc = libssh2_channel_close(channel_);
    if (rc == LIBSSH2_ERROR_EAGAIN) return false;
    if (rc == 0) rc = libssh2_channel_wait_closed(channel_);
    if (rc == LIBSSH2_ERROR_EAGAIN) return false;
    if (rc < 0) return failed("closing the channel");
    collect_exit();
    phase_ = Phase::Free;
  }
  const int rc = libssh2_channel_free(channel_);
  if (rc == LIBSSH2_ERROR_EAGAIN) return false;
  channel_ = nullptr;
  return true;
}

void SshExec::collect_exit() {
  char* name = nullptr;
  std::size_t name_len = 0;
  libssh2_channel_get_exit_signal(channel_, &name, &name_len, nullptr, nullptr, nullptr, nullptr);
  if (name && name_len > 0) {
    result_.signal.assign(name, name_len);
  } else {
    result_.exit_code = libssh2_channel_get_exit_status(channel_);
  }
  if (name) libssh2_free(session_->raw(), name);
}

bool SshExec::check_deadlines() {
  if (phase_ == Phase::Done) return true;
  const double t = now();
  if (term_at_ > 0 && t >= term_at_) {
    term_at_ = 0;
    result_.timed_out = true;
    kill("TERM");
  }
  if (kill_at_ > 0 && t >= kill_at_) {
    kill_at_ = 0;
    send_kill("KILL");
  }
  if (abandon_at_ > 0 && t >= abandon_at_) {
    abandon_at_ = 0;
    if (result_.error.empty()) result_.error = "the command did not end after SIGKILL to its process group";
    channel_ = nullptr;  // left to the session: freeing it would wait on the peer
    finish();
    return true;
  }
  return false;
}

void SshExec::kill(const std::string& signal) {
  if (phase_ == Phase::Done) return;
  const double grace = std::max(0.1, options_.kill_grace_s);
  if (signal == "KILL") {
    kill_at_ = 0;
  } else if (kill_at_ == 0) {
    kill_at_ = now() + grace;  // escalate if TERM is not enough
  }
  if (abandon_at_ == 0) abandon_at_ = now() + 2 * grace + 2;
  send_kill(signal);
  if (session_) session_->wake();
}

void SshExec::send_kill(const std::string& signal) {
  if (pgid_ <= 0 || !session_) {
    pending_signal_ = signal;  // the group is not known yet (or never will be: abandon_at_)
    return;
  }
  ExecOptions kill_options;
  kill_options.command = kill_group_command(pgid_, signal);
  kill_options.timeout_s = 10;
  kill_options.tail_bytes = 4096;
  // A session that is no longer ready has lost the command too: nothing is left to signal.
  if (auto killer = start(*session_, std::move(kill_options), [](const ExecResult&) {})) killers_.push_back(std::move(*killer));
}

bool SshExec::failed(const std::string& what) {
  if (!session_) return false;
  const int rc = libssh2_session_last_errno(session_->raw());
  const std::string detail = session_->last_error();
  if (session_->fatal(rc)) return false;  // lost() has finished us
  result_.error = what + ": " + detail;
  channel_ = nullptr;  // freed with the session
  finish();
  return false;
}

void SshExec::lost(const std::string& error) {
  session_ = nullptr;
  channel_ = nullptr;
  if (phase_ == Phase::Done) return;
  if (result_.error.empty()) result_.error = error;
  finish();
}

void SshExec::finish() {
  if (phase_ == Phase::Done) return;
  phase_ = Phase::Done;
  if (session_) session_->detach(id_);
  out_.finish();
  err_.finish();
  result_.stdout_tail = out_.take_tail();
  result_.stderr_tail = err_.take_tail();
  result_.stdout_bytes = out_.total();
  result_.stderr_bytes = err_.total();
  result_.seconds = now() - started_;
  Done done = std::move(done_);  // `done` may destroy this exec
  if (done) done(result_);
}

}  // namespace runara::ssh

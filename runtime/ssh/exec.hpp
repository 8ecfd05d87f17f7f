// One remote command on an SSH session (a channel): environment and stdin sent without ever
// appearing on the remote command line (see remote_command.hpp), stdout and stderr as whole
// lines to callbacks plus a bounded tail of each in memory, exit code or exit signal, a
// timeout, and kill: the command's whole remote process group is signalled (TERM, then KILL
// after a grace period), so a server and all its workers go. Many execs share one session.
//
// Contract. Threading: all calls and callbacks on the session's loop thread, never blocking.
// Ownership: the caller owns the exec and the session, and the session must outlive it. `done`
// is called exactly once (unless the exec is destroyed first), as the exec's last act, so it
// may destroy the exec. Line callbacks must not destroy it. Destroying a running exec neither
// waits nor kills: kill() and wait for `done` first (teardown does). The kill itself is a second
// exec on the same session. Must not call: Lua, anything blocking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ssh/line_output.hpp"
#include "ssh/remote_command.hpp"
#include "ssh/session.hpp"

namespace runara::ssh {

struct ExecOptions {
  std::string command;
  EnvList env;             // exported before the command runs; never on a command line
  std::string stdin_data;  // then end of input, unless hold_stdin
  bool hold_stdin = false;  // stdin stays open for send_input() until the exec ends or is killed
  std::size_t max_line = 64u << 10;  // longer stdout/stderr lines arrive in pieces (LineOutput)
  double timeout_s = 0;    // 0: none; else TERM to the group, KILL after kill_grace_s
  double kill_grace_s = 3;
  std::size_t tail_bytes = 8u << 20;  // per stream
  LineOutput::OnLine on_stdout, on_stderr;
};

struct ExecResult {
  std::optional<int> exit_code;  // unset when killed by a signal or the channel failed
  std::string signal;            // "TERM", "KILL", ... when killed by one
  std::string stdout_tail, stderr_tail;
  std::size_t stdout_bytes = 0, stderr_bytes = 0;  // in total, tail or not
  double seconds = 0;
  bool timed_out = false;
  std::string error;  // the channel or the session failed: why (the result is partial)
};

class SshExec final : public Stepper {
 public:
  using Done = std::function<void(const ExecResult&)>;
  // Starts at once, or fails (nothing sent) for a bad env name or a session that is not ready.
  static Result<std::unique_ptr<SshExec>> start(SshSession& session, ExecOptions options, Done done);
  ~SshExec() override;
  SshExec(const SshExec&) = delete;
  SshExec& operator=(const SshExec&) = delete;

  // Signal the remote process group (as soon as it is known); "TERM" escalates to "KILL"
  // after kill_grace_s, and the channel is dropped if even that does not end it.
  void kill(const std::string& signal = "TERM");
  // More stdin (hold_stdin only), written after what came before.
  void send_input(std::string_view data);
  bool running() const { return phase_ != Phase::Done; }
  long pgid() const { return pgid_; }  // 0 until the remote side reported it
  // What was kept so far of each stream (the same tails the result will hold), while it runs.
  std::string stdout_tail() const { return out_.tail(); }
  std::string stderr_tail() const { return err_.tail(); }

  Step step() override;
  void lost(const std::string& error) override;

 private:
  enum class Phase { Open, Exec, Run, Close, Free, Done };
  SshExec(SshSession& session, ExecOptions options, std::string preamble, Done done);
  bool open_channel();
  bool run_exec();
  bool write_stdin(bool& progressed);
  bool read_streams(bool& progressed);
  bool read_stream(int stream, bool& progressed);
  void on_stdout_bytes(std::string_view bytes);
  bool close_channel();
  bool check_deadlines();  // true: the exec finished (and may be destroyed)
  void send_kill(const std::string& signal);
  void collect_exit();
  bool failed(const std::string& what);
  void finish();
  double now() const;

  SshSession* session_;
  ExecOptions options_;
  Done done_;
  std::uint64_t id_ = 0;
  LIBSSH2_CHANNEL* channel_ = nullptr;
  Phase phase_ = Phase::Open;
  std::string input_;  // preamble + stdin
  std::size_t written_ = 0;
  bool eof_sent_ = false;
  std::string header_;  // stdout until the pgid marker line is complete
  bool header_done_ = false;
  LineOutput out_, err_;
  long pgid_ = 0;
  std::string pending_signal_;  // asked for before the group was known
  double started_ = 0, term_at_ = 0, kill_at_ = 0, abandon_at_ = 0;
  ExecResult result_;
  std::vector<std::unique_ptr<SshExec>> killers_;  // the kill commands sent (second execs)
};

}  // namespace runara::ssh

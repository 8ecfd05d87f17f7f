// One command a script started on a machine (s:exec, s:spawn): its exec, its output as the run
// sees it (live on the terminal prefixed with the machine's name unless quiet, in the machine's
// log, in bounded tails counted against --max-memory), spawn's backlog of stdout lines for
// :lines() (bounded at 4 MiB of memory, the oldest dropped), and the one task waiting on it (for
// a line, or for its end).
//
// Contract. Threading: the run's loop thread. Ownership: the machine's session (MachineSession)
// holds it while it runs; a spawned process's Lua object shares it and may outlive the session
// (then `session` is null and it only reports). Waiters are called at most once each, never
// from inside a call that set them. Output past --max-memory kills the command (TERM).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "ssh/exec.hpp"
#include "ssh/memory_hold.hpp"
#include "ssh/run_hooks.hpp"

namespace runara::ssh {

class MachineSession;

// What a line kept in spawn's :lines() backlog costs in memory: its std::string (in the deque)
// and, when it does not fit inside that, its heap block with the allocator's own overhead.
// Counting only the bytes let a flood of empty lines (0 bytes each, 32 in memory) pass the cap.
std::size_t queued_line_cost(const std::string& line);

// A command's first line, shortened, for messages ("make -j ..."): shown redacted.
std::string command_label(const std::string& command);

inline constexpr std::size_t kOutputTail = 8u << 20;  // kept and counted per stream

// exec: s:exec's (its result handed over once); spawn: s:spawn's (stdout lines queued too);
// internal: runara's own (cloud-init's wait): no output shown, logged or counted.
enum class ProcessKind { exec, spawn, internal };

class RemoteProcess {
 public:
  RemoteProcess(const RunHooks& hooks, std::string label, ProcessKind kind, bool quiet)
      : hooks_(&hooks), label_(std::move(label)), kind_(kind), quiet_(quiet), memory_(hooks) {}

  const std::string& label() const { return label_; }
  bool done() const { return done_; }
  const ExecResult& result() const { return result_; }
  const std::string& memory_error() const { return memory_error_; }  // output passed --max-memory
  std::string stdout_so_far() const;  // the tail kept so far (all of it once done)
  std::string stderr_so_far() const;
  bool running() const { return exec_ && !done_; }  // what process:kill answers
  void kill(const std::string& signal);  // the remote process group; nothing once it ended

  // :lines(): the oldest line of the backlog, its cost given back; nullopt when none is queued.
  std::optional<std::string> take_line();
  bool waited_on() const { return line_waiter_ || exit_waiter_; }
  // One waiter at a time: called with the next line (nullopt: the command ended, no line left),
  // or once the command ended.
  void wait_line(std::function<void(std::optional<std::string>)> waiter) { line_waiter_ = std::move(waiter); }
  void wait_exit(std::function<void()> waiter) { exit_waiter_ = std::move(waiter); }
  void stop_waiting() { line_waiter_ = nullptr, exit_waiter_ = nullptr; }
  // How the command ended, as s:exec judges it: its failure (the channel, --max-memory, or, with
  // `check`, a nonzero exit or signal with the end of its stderr), or ok.
  Status outcome(bool check) const;
  void forget_result();  // s:exec handed the result over: its tails' memory goes back

 private:
  friend class MachineSession;
  void on_line(int stream, std::string_view line);
  void finished(const ExecResult& result);
  void count(int stream, std::size_t bytes);
  void stop_for_memory(std::string why);
  void wake();

  const RunHooks* hooks_;
  MachineSession* session_ = nullptr;  // null once the session is gone
  std::uint64_t id_ = 0;
  std::string label_;
  ProcessKind kind_;
  bool quiet_;
  std::unique_ptr<SshExec> exec_;
  bool done_ = false;
  ExecResult result_;
  std::string memory_error_;
  std::size_t counted_[2] = {0, 0};  // tail bytes counted per stream (stdout, stderr)
  std::deque<std::string> lines_;    // spawn: stdout lines not yet taken
  std::size_t queued_bytes_ = 0, dropped_lines_ = 0;  // queued_bytes_: their queued_line_cost, held in memory_
  std::function<void(std::optional<std::string>)> line_waiter_;
  std::function<void()> exit_waiter_;
  MemoryHold memory_;
};

}  // namespace runara::ssh

// Somewhere fixed command lines can run: an `ssh` session, or the local host for
// `gpu_metrics.local()`. One primitive (ssh) provides targets, others (gpu_metrics) use them,
// and neither includes the other: they meet through this interface and Context.
//
// Contract. Threading: every call and every callback on the run's loop thread; run() never
// blocks: it starts the command and returns. Ownership: the caller owns the Running handle;
// destroying it kills the command (its process group) without waiting, and after that no
// callback comes. Callbacks may destroy the Running handle (on_exit is always the last call).
// What may run: only command lines the runtime wrote itself (e.g. "nvidia-smi --query-gpu=..."),
// never text a script supplied; a script reaching a target this way gets no shell.
#pragma once

#include "runara/export.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace runara {

class RUNARA_API CommandTarget {
 public:
  struct Exit {
    int code = -1;            // the command's exit status; -1 if it never ran or was killed
    std::string error;        // "" unless it could not start, was lost (connection, crash) or killed
    std::string stderr_tail;  // the last few KiB of its standard error
  };
  struct Handlers {
    std::function<void(std::string_view line)> on_line;  // each whole stdout line, on arrival
    std::function<void(const Exit& exit)> on_exit;       // exactly once, last
  };
  class Running {
   public:
    virtual ~Running() = default;  // kills the command if still running; no callback after
    // More input for a command started with Input::hold_open (ignored otherwise).
    virtual void write(std::string_view data) { (void)data; }
  };
  // What a command reads on stdin. With hold_open, stdin stays open after `data` for write(),
  // and its end (the handle destroyed, the connection lost) is how the command learns to stop.
  struct Input {
    std::string data;
    bool hold_open = false;
    std::size_t max_line = 64u << 10;  // longer stdout lines arrive in pieces of this size
  };

  virtual ~CommandTarget() = default;
  virtual std::string name() const = 0;  // "gpu-1 (root@203.0.113.7:22)" or "local", for messages
  virtual std::unique_ptr<Running> run(const std::string& command, Handlers handlers) = 0;
  // The same with input. Targets without stdin support report it through on_exit's error.
  virtual std::unique_ptr<Running> run(const std::string& command, Handlers handlers, Input input);
  // The address the target's commands run at ("203.0.113.7"; "" for the local host), and the
  // port runara reaches it on (ssh's; 0 for the local host).
  virtual std::string address() const { return {}; }
  virtual int port() const { return 0; }
  // Makes `remote_path` (relative to the login's home) a copy of `local_path` (a file the
  // runtime chose, never one a script named), mode 0755, unless an executable file is there
  // already: the path must name the content (a hash), so an existing file is the same. `done`
  // gets "" or why it failed, on the loop, exactly once (an error if the target goes first).
  virtual void install(const std::string& local_path, const std::string& remote_path,
                       std::function<void(const std::string& error)> done);
};

}  // namespace runara

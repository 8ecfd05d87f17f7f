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
  };

  virtual ~CommandTarget() = default;
  virtual std::string name() const = 0;  // "gpu-1 (root@203.0.113.7:22)" or "local", for messages
  virtual std::unique_ptr<Running> run(const std::string& command, Handlers handlers) = 0;
};

}  // namespace runara

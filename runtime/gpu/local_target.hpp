// gpu_metrics.local(): the host runara itself runs on as a CommandTarget, for when the GPUs are
// local. It runs the runtime's own fixed tool command lines (gpu/backend.hpp) with uv_spawn: the
// line is split at spaces into an argv and executed directly, never through a shell, with an
// environment of PATH and LC_ALL=C only (the tools need nothing else; the run's tokens stay out).
//
// Contract. Threading: the run's loop thread only (CommandTarget's contract). Each command gets
// its own process group; destroying the Running handle SIGKILLs the group and closes the pipes,
// with no callback after. A tool not on PATH ends with Exit::error "not found on this host
// (PATH=...)" delivered from the loop, never from inside run(). Lines longer than 64 KiB
// are delivered in 64 KiB pieces; the last 4 KiB of stderr are kept for Exit::stderr_tail.
#pragma once

#include <memory>
#include <string>

#include <runara/command_target.hpp>

typedef struct uv_loop_s uv_loop_t;

namespace runara::gpu {

class LocalTarget : public CommandTarget {
 public:
  // `path`: the PATH the tools are looked up in and run with; "" for runara's own PATH.
  explicit LocalTarget(uv_loop_t* loop, std::string path = {}) : loop_(loop), path_(std::move(path)) {}
  std::string name() const override { return "local"; }
  std::unique_ptr<Running> run(const std::string& command, Handlers handlers) override;

 private:
  uv_loop_t* loop_;
  std::string path_;
};

}  // namespace runara::gpu

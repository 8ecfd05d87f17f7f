// Runs one fixed command on a CommandTarget and hands back its whole stdout, bounded in size
// and time: the building block of gpu_metrics.read, backend detection and polled sampling.
//
// Contract. Threading: the loop thread only. The callback comes exactly once, from the loop
// (never inside start()), unless the OneShot is destroyed first: destroying it kills the command
// and no callback comes. Output past `max_bytes` is dropped and reported as an error; a command
// still running after `timeout_ms` is killed and reported as hung. The callback may destroy the
// OneShot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <runara/command_target.hpp>

#include "gpu/sample.hpp"

typedef struct uv_loop_s uv_loop_t;
typedef struct uv_timer_s uv_timer_t;

namespace runara::gpu {

struct Collected {
  std::string text;       // stdout, lines joined with '\n'
  std::string error;      // "" when the command ran and exited 0; else what went wrong, for people
  uint64_t last_line_ns = 0;  // uv_hrtime() when the last line arrived (0: none)
  bool timed_out = false;     // killed for running past the timeout
};

class OneShot {
 public:
  using Done = std::function<void(Collected)>;
  OneShot(uv_loop_t* loop, uint64_t timeout_ms, std::size_t max_bytes = kMaxToolOutputBytes);
  ~OneShot();
  OneShot(const OneShot&) = delete;
  OneShot& operator=(const OneShot&) = delete;

  // `what` names the command in errors ("nvidia-smi on gpu-1 (root@...)").
  void start(CommandTarget& target, const std::string& command, std::string what, Done done);

 private:
  void finish(std::string error);

  uv_timer_t* timer_;  // heap-held: it closes after we are gone
  uint64_t timeout_ms_;
  std::size_t max_bytes_;
  std::unique_ptr<CommandTarget::Running> running_;
  Collected out_;
  std::string what_;
  Done done_;
  bool overflow_ = false;
  bool starting_ = false;    // inside target.run(): an exit now is reported from the loop
  bool early_exit_ = false;  // the target reported the exit before run() returned
  std::string early_error_;
};

}  // namespace runara::gpu

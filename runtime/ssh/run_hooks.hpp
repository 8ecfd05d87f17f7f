// What the ssh engine needs of the run it serves, as plain callbacks: the run's log, terminal and
// output folder, its memory budget, its secrets' redaction and its tunnel list. The binding fills
// them from the run's Context; tests may fill them with anything. Keeping them narrow keeps the
// engine free of Lua and of the run core (cmake/components.cmake: runara_ssh sees only base).
//
// Contract: every hook is called on the run's loop thread, never blocks, and never calls back
// into the engine. All are required unless marked optional.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "runara/runtime.hpp"

namespace runara::ssh {

struct RunHooks {
  std::function<void(std::string_view line)> log;       // into run.log (the run redacts it)
  std::function<void(std::string_view line)> progress;  // the transient status line
  std::function<void(std::string_view text)> print;     // the run's standard output (redacted)
  std::function<std::string(std::string_view text)> redact;  // the run's secrets masked
  // --max-memory: takes `bytes` or refuses (nothing taken), naming `what` and the limit.
  std::function<Status(std::size_t bytes, std::string_view what)> reserve_memory;
  std::function<void(std::size_t bytes)> release_memory;
  std::function<Result<int>()> open_out_dir;  // a descriptor of the output folder; the caller closes it
  std::function<void(int local_port)> remove_tunnel;  // a forward's port is no longer the run's
  std::function<double()> remaining_runtime_s;  // how long the run may still last
  // What the engine does for the script — each command it starts, each transfer — as the run's
  // Activity (machine, text). Optional.
  std::function<void(const Activity& activity)> activity;
};

}  // namespace runara::ssh

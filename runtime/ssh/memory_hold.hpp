// Bytes the engine holds on the script's behalf (a command's output tails, spawn's line
// backlog), counted against --max-memory in 64 KiB steps so that a busy stream does not ask the
// run's budget for every line.
//
// Contract: loop thread only; the hooks must outlive the hold. Not copyable; gives back what it
// reserved when reset or destroyed.
#pragma once

#include <cstddef>
#include <string_view>

#include "base/result.hpp"
#include "ssh/run_hooks.hpp"

namespace runara::ssh {

class MemoryHold {
 public:
  explicit MemoryHold(const RunHooks& hooks) : hooks_(&hooks) {}
  ~MemoryHold() { reset(); }
  MemoryHold(const MemoryHold&) = delete;
  MemoryHold& operator=(const MemoryHold&) = delete;
  Status grow(std::size_t bytes, std::string_view what);  // the refusal names `what` and the limit
  void shrink(std::size_t bytes);
  void reset();

 private:
  const RunHooks* hooks_;
  std::size_t used_ = 0, reserved_ = 0;
};

}  // namespace runara::ssh

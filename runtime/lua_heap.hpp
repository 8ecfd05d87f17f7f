// The Lua heap of one run, capped exactly through a custom lua_Alloc. What C++ code holds on the
// script's behalf (MemoryBudget, shared with the run's primitives) counts against the same cap.
#pragma once

#include <atomic>
#include <cstddef>

#include "runara/memory_budget.hpp"

namespace runara {

class LuaHeap {
 public:
  explicit LuaHeap(std::size_t limit) : limit_(limit) {}

  static void* alloc(void* ud, void* ptr, std::size_t old_size, std::size_t new_size);

  std::size_t used() const { return used_; }
  std::size_t limit() const { return limit_; }
  bool exceeded() const { return exceeded_.load(); }
  // The runtime that owns this heap: Lua code reaches it through lua_getallocf, which is
  // cheaper than a registry lookup in the instruction hook.
  void* owner = nullptr;
  // The run's budget: its reservations shrink what the heap may grow to, and the heap's size is
  // published there for reservations made on other threads. Null: the heap alone.
  MemoryBudget* budget = nullptr;
  // Called once when the limit is first hit (to stop the run), with `owner`.
  void (*on_exceeded)(void* owner) = nullptr;

 private:
  void publish() {
    if (budget) budget->heap_used.store(used_, std::memory_order_relaxed);
  }

  // Once the limit is hit the run is being stopped; unwinding and error reporting still need a
  // little memory, so a small reserve beyond the limit stays available for them.
  static constexpr std::size_t kReserve = 32u << 20;

  std::size_t limit_;
  std::size_t used_ = 0;
  std::atomic<bool> exceeded_{false};
};

}  // namespace runara

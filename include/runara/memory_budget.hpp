// The per-run memory budget behind --max-memory: the Lua heap (LuaHeap) and every large C++
// buffer a primitive holds on a script's behalf — requests.jsonl's queue, request bodies, prompt pools,
// files read whole, worker threads — count against one limit.
//
// Threading: reserve() and release() are safe from any thread (an atomic counter); the Lua heap
// publishes its size through heap_used, written only by the Lua thread. Nothing here allocates
// or blocks, so it may be called on load worker threads and libuv's thread pool.
// Ownership: shared (std::shared_ptr) by the runtime and by whatever outlives a Lua call
// (a load job and its workers), so a reservation can always be released.
#pragma once

#include "runara/export.hpp"

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace runara {

class RUNARA_API MemoryBudget {
 public:
  explicit MemoryBudget(std::size_t limit) : limit_(limit) {}

  // Takes `bytes` out of the budget; false (nothing taken) when the Lua heap and what is already
  // reserved leave less than that.
  bool reserve(std::size_t bytes);
  void release(std::size_t bytes) { reserved_.fetch_sub(bytes, std::memory_order_relaxed); }
  // The error a refused reservation reports: names `what`, its size and the flag to raise.
  std::string refusal(std::size_t bytes, std::string_view what) const;

  std::size_t limit() const { return limit_; }
  std::size_t reserved() const { return reserved_.load(std::memory_order_relaxed); }
  std::size_t left() const;

  // The Lua heap's size, written by LuaHeap on the Lua thread, read by reserve() anywhere.
  std::atomic<std::size_t> heap_used{0};

 private:
  const std::size_t limit_;
  std::atomic<std::size_t> reserved_{0};
};

// Bytes held from a budget, given back when it goes (move-only). Empty when default-made.
class RUNARA_API MemoryReservation {
 public:
  MemoryReservation() = default;
  MemoryReservation(std::shared_ptr<MemoryBudget> budget, std::size_t bytes) : budget_(std::move(budget)), bytes_(bytes) {}
  MemoryReservation(MemoryReservation&& other) noexcept { *this = std::move(other); }
  MemoryReservation& operator=(MemoryReservation&& other) noexcept;
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;
  ~MemoryReservation() { reset(); }

  // Reserves `bytes` more; false (nothing changed) when the budget refuses.
  bool grow(std::size_t bytes);
  // Takes over `other`'s bytes (of the same budget), leaving it empty.
  void absorb(MemoryReservation&& other);
  // Gives back all but `bytes` (when it holds more).
  void shrink_to(std::size_t bytes);
  void reset();
  std::size_t bytes() const { return bytes_; }

 private:
  std::shared_ptr<MemoryBudget> budget_;
  std::size_t bytes_ = 0;
};

}  // namespace runara

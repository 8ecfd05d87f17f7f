#include "runara/memory_budget.hpp"

namespace runara {

bool MemoryBudget::reserve(std::size_t bytes) {
  std::size_t now = reserved_.load(std::memory_order_relaxed);
  do {
    const std::size_t heap = heap_used.load(std::memory_order_relaxed);
    if (heap >= limit_ || bytes > limit_ - heap || now > limit_ - heap - bytes) return false;
  } while (!reserved_.compare_exchange_weak(now, now + bytes, std::memory_order_relaxed));
  return true;
}

std::size_t MemoryBudget::left() const {
  const std::size_t used = heap_used.load(std::memory_order_relaxed) + reserved();
  return used >= limit_ ? 0 : limit_ - used;
}

std::string MemoryBudget::refusal(std::size_t bytes, std::string_view what) const {
  const auto mib = [](std::size_t b) { return std::to_string(b / (1u << 20) + (b % (1u << 20) ? 1 : 0)); };
  return std::string(what) + " needs about " + mib(bytes) + " MiB, more than the " + mib(left()) +
         " MiB left of the run's memory limit of " + mib(limit_) + " MiB (raise it with --max-memory)";
}

MemoryReservation& MemoryReservation::operator=(MemoryReservation&& other) noexcept {
  if (this == &other) return *this;
  reset();
  budget_ = std::move(other.budget_);
  bytes_ = other.bytes_;
  other.bytes_ = 0;
  return *this;
}

bool MemoryReservation::grow(std::size_t bytes) {
  if (!budget_ || !budget_->reserve(bytes)) return false;
  bytes_ += bytes;
  return true;
}

void MemoryReservation::absorb(MemoryReservation&& other) {
  if (!budget_) budget_ = other.budget_;
  bytes_ += other.bytes_;
  other.bytes_ = 0;
  other.budget_.reset();
}

void MemoryReservation::shrink_to(std::size_t bytes) {
  if (!budget_ || bytes >= bytes_) return;
  budget_->release(bytes_ - bytes);
  bytes_ = bytes;
}

void MemoryReservation::reset() {
  if (budget_ && bytes_) budget_->release(bytes_);
  bytes_ = 0;
}

}  // namespace runara

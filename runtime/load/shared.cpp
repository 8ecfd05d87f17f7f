#include "load/shared.hpp"

#include <uv.h>

namespace runara {

LoadShared::LoadShared(const LoadSpec& s) : spec(s), start_ns(static_cast<std::int64_t>(uv_hrtime())) {
  if (spec.open_loop()) schedule_.emplace(spec.schedule());
  issue_until_ns_ = spec.duration_s > 0 ? static_cast<std::int64_t>((spec.duration_s + spec.warmup_s) * 1e9) : INT64_MAX;
}

std::int64_t LoadShared::now() const {
  return static_cast<std::int64_t>(uv_hrtime()) - start_ns;
}

bool LoadShared::claim(std::uint64_t& index, std::int64_t& intended_ns) {
  if (stopping.load(std::memory_order_relaxed)) return false;
  std::lock_guard lock(mutex_);
  if (exhausted_) return false;
  const std::int64_t due = schedule_ ? schedule_->next_ns() : now();
  const bool warmup = is_warmup(next_index_, due);
  if (due > issue_until_ns_ || (!warmup && spec.requests && measured_ >= spec.requests)) {
    exhausted_ = true;  // the schedule is past its end: nothing more, for anyone
    return false;
  }
  if (!warmup) ++measured_;
  index = next_index_++;
  intended_ns = due;
  return true;
}

bool LoadShared::is_warmup(std::uint64_t index, std::int64_t intended_ns) const {
  return index < spec.warmup_requests || intended_ns < static_cast<std::int64_t>(spec.warmup_s * 1e9);
}

void LoadShared::started_one() {
  const std::int64_t now_in_flight = in_flight_.fetch_add(1) + 1;
  std::int64_t seen = max_in_flight_.load();
  while (now_in_flight > seen && !max_in_flight_.compare_exchange_weak(seen, now_in_flight)) {
  }
}

void LoadShared::finished_one() {
  in_flight_.fetch_sub(1);
}

void LoadShared::failed_one(std::int64_t now_ns) {
  std::int64_t none = -1;
  first_fail_ns_.compare_exchange_strong(none, now_ns, std::memory_order_relaxed);
  last_fail_ns_.store(now_ns, std::memory_order_relaxed);
}

bool LoadShared::only_failures_for(double seconds) const {
  const std::int64_t first = first_fail_ns_.load(std::memory_order_relaxed);
  if (first < 0) return false;
  const auto window = static_cast<std::int64_t>(seconds * 1e9);
  const std::int64_t t = now();
  // Still failing: a failure within the window, so one early failure followed by long
  // requests still streaming is not mistaken for a dead target.
  return t - first >= window && t - last_fail_ns_.load(std::memory_order_relaxed) < window;
}

void LoadShared::fail(const std::string& message) {
  {
    std::lock_guard lock(error_mutex_);
    if (error_.empty()) error_ = message;
  }
  stopping = true;
}

std::string LoadShared::error() const {
  std::lock_guard lock(error_mutex_);
  return error_;
}

}  // namespace runara

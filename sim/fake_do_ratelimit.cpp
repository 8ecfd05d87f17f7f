#include "sim/fake_do_ratelimit.hpp"

#include <algorithm>

namespace runara::sim::fakedo {

RateLimiter::RateLimiter(RateLimitConfig cfg)
    : cfg_(cfg), epoch_steady_(Clock::now()), epoch_wall_(std::chrono::system_clock::now()) {}

std::int64_t RateLimiter::unix_at(Clock::time_point t) const {
  const auto wall = epoch_wall_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(t - epoch_steady_);
  return std::chrono::duration_cast<std::chrono::seconds>(wall.time_since_epoch()).count();
}

RateDecision RateLimiter::admit(bool is_key_list) {
  using std::chrono::hours;
  using std::chrono::minutes;
  const auto now = Clock::now();
  auto prune = [now](std::deque<Clock::time_point>& q, Clock::duration window) {
    while (!q.empty() && q.front() + window <= now) q.pop_front();
  };
  prune(hour_, hours(1));
  prune(minute_, minutes(1));
  prune(keys_, minutes(1));

  auto seconds_until = [now](Clock::time_point t) {
    const auto s = std::chrono::duration_cast<std::chrono::milliseconds>(t - now).count();
    return std::max<int>(1, static_cast<int>((s + 999) / 1000));
  };

  RateDecision d;
  d.limit = cfg_.per_hour;
  if (cfg_.enforce) {
    if (static_cast<int>(hour_.size()) >= cfg_.per_hour) {
      d.limited = true;
    } else if (static_cast<int>(minute_.size()) >= cfg_.per_minute) {
      d.limited = true;
      d.retry_after_s = seconds_until(minute_.front() + minutes(1));
    } else if (is_key_list && static_cast<int>(keys_.size()) >= cfg_.keys_per_minute) {
      d.limited = true;
      d.retry_after_s = seconds_until(keys_.front() + minutes(1));
    }
  }
  if (!d.limited) {
    hour_.push_back(now);
    minute_.push_back(now);
    if (is_key_list) keys_.push_back(now);
  }
  d.remaining = d.limited ? 0 : std::max(0, cfg_.per_hour - static_cast<int>(hour_.size()));
  d.reset = unix_at(hour_.empty() ? now : hour_.front() + hours(1));
  return d;
}

}  // namespace runara::sim::fakedo

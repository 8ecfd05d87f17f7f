// DigitalOcean's rate limiting as the API describes it: every request counts against the token for
// one hour (5000/hour) and one minute (250/minute burst); GET /v2/account/keys is limited to 10 per
// minute. Produces the ratelimit-* header values. Not thread-safe: the owner serialises calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

namespace runara::sim::fakedo {

struct RateLimitConfig {
  bool enforce = true;
  int per_hour = 5000;
  int per_minute = 250;
  int keys_per_minute = 10;
};

struct RateDecision {
  bool limited = false;              // answer 429
  std::optional<int> retry_after_s;  // burst limits only
  int limit = 0;                     // ratelimit-limit
  int remaining = 0;                 // ratelimit-remaining
  std::int64_t reset = 0;            // ratelimit-reset (unix seconds)
};

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateLimiter(RateLimitConfig cfg);

  void set_config(const RateLimitConfig& cfg) { cfg_ = cfg; }
  // Counts one request (unless it is refused) and says how to answer it.
  RateDecision admit(bool is_key_list);

 private:
  std::int64_t unix_at(Clock::time_point t) const;

  RateLimitConfig cfg_;
  Clock::time_point epoch_steady_;
  std::chrono::system_clock::time_point epoch_wall_;
  std::deque<Clock::time_point> hour_;
  std::deque<Clock::time_point> minute_;
  std::deque<Clock::time_point> keys_;
};

}  // namespace runara::sim::fakedo

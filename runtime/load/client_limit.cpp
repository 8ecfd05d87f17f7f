#include "load/client_limit.hpp"

#include <algorithm>
#include <cstdio>

namespace runara {

namespace {

constexpr double kBusy = 0.9;          // a worker thread this busy cannot keep its timers
constexpr double kRateShortfall = 0.95;
constexpr double kLateMs = 10;
constexpr std::uint64_t kFewest = 20;  // fewer requests say nothing about a schedule

std::string format(const char* pattern, double a, double b) {
  char text[256];
  std::snprintf(text, sizeof text, pattern, a, b);
  return text;
}

}  // namespace

ClientLimit judge_client_limit(const ClientLoad& load) {
  ClientLimit out;
  if (load.threads > 0 && load.wall_s > 0) out.cpu_utilization = std::clamp(load.cpu_s / (load.threads * load.wall_s), 0.0, 1.0);
  if (out.cpu_utilization >= kBusy) {
    out.reason = format("the load generator's worker threads were busy %.0f %% of the load's time (%.0f thread(s)): "
                        "give it more threads or cores, or run it on another machine",
                        100 * out.cpu_utilization, load.threads);
    return out;
  }
  if (!load.open_loop || load.bounded || load.requests < kFewest) return out;
  if (load.scheduled_rate > 0 && load.achieved_rate < kRateShortfall * load.scheduled_rate) {
    out.reason = format("requests went out at %.1f/s against a schedule of %.1f/s: the client fell behind", load.achieved_rate,
                        load.scheduled_rate);
  } else if (load.p99_queue_ms > kLateMs) {
    out.reason = format("1 %% of requests went out more than %.1f ms after they were due (limit %.0f ms): the client fell behind",
                        load.p99_queue_ms, kLateMs);
  }
  return out;
}

bool kept_schedule(const ClientLoad& load) {
  if (!load.open_loop) return true;
  const bool on_rate = load.requests < kFewest || load.scheduled_rate <= 0 || load.achieved_rate >= kRateShortfall * load.scheduled_rate;
  return on_rate && load.p99_queue_ms <= kLateMs;
}

}  // namespace runara

// Whether a load measured the server or its own client: a load generator that falls behind its
// schedule (open loop) or whose worker threads are busy all the time (CPU-bound) reports a
// client limit, not the server's. The results carry the verdict and the summary says it.
//
// Contract. Pure: numbers in, verdict out; any thread, no I/O, no allocation beyond the reason.
#pragma once

#include <cstdint>
#include <string>

namespace runara {

struct ClientLoad {
  bool open_loop = false;
  bool bounded = false;          // an open loop with max_concurrency: waits for slots are the server's
  int threads = 1;
  double wall_s = 0;             // the load's wall time
  double cpu_s = 0;              // its worker threads' CPU time, summed
  double achieved_rate = 0;      // open loop: measured sends per second, from actual send times
  double scheduled_rate = 0;     // ... and from intended ones
  double p99_queue_ms = 0;       // how late the 99th percentile request went out
  std::uint64_t requests = 0;    // measured requests
};

struct ClientLimit {
  double cpu_utilization = 0;    // cpu_s / (threads × wall_s), 0 … 1 (more: clock noise, clamped)
  std::string reason;            // "" when the client was not the limit
};

// Thresholds: worker threads busy >= 90 % of the time; an unbounded open loop of 20+ requests
// sending < 95 % of its scheduled rate, or its p99 request more than 10 ms late.
ClientLimit judge_client_limit(const ClientLoad& load);

// Whether an open loop sent its requests when they were due: at least 95 % of the scheduled rate
// (20+ requests) and its p99 request at most 10 ms late. A bounded loop whose requests waited for
// a free slot did not, whatever the reason: its from-schedule latencies carry the wait.
bool kept_schedule(const ClientLoad& load);

}  // namespace runara

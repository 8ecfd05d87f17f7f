// What the worker threads of one load share: the clock, the request counter and, in an open
// loop, the one arrival schedule every worker draws its next send time from (so the whole load
// follows a single seeded schedule whatever the number of threads); where finished requests'
// records go (requests.jsonl's writer, owned by the engine) and the bounds on what is kept.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "load/arrival_schedule.hpp"
#include "load/spec.hpp"
#include "load/request_log.hpp"

namespace runara {

class LoadShared {
 public:
  explicit LoadShared(const LoadSpec& spec);

  const LoadSpec& spec;
  const std::int64_t start_ns;  // uv_hrtime() when the load started
  std::int64_t now() const;     // ns since start_ns

  // The next request to issue: its index and when it is due (ns after the start). False once
  // the load has issued everything (count reached, duration over, or stopping).
  bool claim(std::uint64_t& index, std::int64_t& intended_ns);
  bool is_warmup(std::uint64_t index, std::int64_t intended_ns) const;

  void started_one();   // a request went out
  void finished_one();  // a request ended
  std::int64_t max_in_flight() const { return max_in_flight_.load(); }

  std::atomic<bool> stopping{false};

  // --- health of the target, for giving up on a dead one (one relaxed store per request) ---
  void succeeded_one() { first_fail_ns_.store(-1, std::memory_order_relaxed); }
  void failed_one(std::int64_t now_ns);
  // True when requests have failed without a single success for `give_up_s`, and still fail.
  bool only_failures_for(double seconds) const;

  // --- requests.jsonl: its writer (null: records are only counted) and its bound ---
  RequestLog* request_log = nullptr;
  bool keep_record() { return kept_.fetch_add(1, std::memory_order_relaxed) < spec.max_request_lines; }
  // Measured requests whose input/output lengths were offered (RequestLengths); set past the
  // bound when the memory budget had no room for them.
  std::atomic<std::uint64_t> lengths_taken{0};
  // Measured requests offered to save_detailed's RequestDetails (the same bound).
  std::atomic<std::uint64_t> details_taken{0};

  // Ends the load early with `message` (the first one wins); the workers see `stopping`.
  void fail(const std::string& message);
  std::string error() const;

 private:
  std::mutex mutex_;
  std::optional<ArrivalSchedule> schedule_;  // open loop only
  std::uint64_t next_index_ = 0;
  std::uint64_t measured_ = 0;  // claimed requests that are not warmup
  bool exhausted_ = false;
  std::int64_t issue_until_ns_;              // no request is due after this
  std::atomic<std::int64_t> in_flight_{0}, max_in_flight_{0};
  std::atomic<std::int64_t> first_fail_ns_{-1}, last_fail_ns_{-1};  // -1: none since the last success
  std::atomic<std::uint64_t> kept_{0};
  mutable std::mutex error_mutex_;
  std::string error_;
};

}  // namespace runara

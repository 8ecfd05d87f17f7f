// The statistics of one load, accumulated request by request in bounded memory: one per worker
// thread, merged at the end (and, under the worker's lock, for the live progress line).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "http/latency_histogram.hpp"
#include "load/request_record.hpp"

namespace runara {

// Service-level objectives for goodput (vLLM's --goodput): a request is "good" when it succeeded
// and meets every objective given (0 = not set), its TTFT and E2EL from the send as vLLM's.
struct Slo {
  double ttft_ms = 0, tpot_ms = 0, e2el_ms = 0;
  bool any() const { return ttft_ms > 0 || tpot_ms > 0 || e2el_ms > 0; }
  bool met_by(const RequestRecord& r) const;
};

class LoadStats {
 public:
  LoadStats() = default;
  explicit LoadStats(Slo s) : slo(s) {}

  // One finished request (warmup requests only count as warmup). `itl_ns` are its gaps between
  // token events; `error_message` describes a failure (the first few of each kind are kept).
  void add(const RequestRecord& r, const std::vector<std::int64_t>& itl_ns, const std::string& error_message);
  // Tokens that arrived at `at_ns` (for the busiest second's token rate).
  void add_tokens_at(std::int64_t at_ns, int tokens);
  void merge(const LoadStats& other);

  Slo slo;
  std::uint64_t completed = 0, failed = 0, warmup = 0, good = 0;
  std::int64_t input_tokens = 0, output_tokens = 0;  // what the throughputs use (server's when it said)
  // Input tokens both ways: the client's own count (the prompt pool's lengths) and what the
  // server reported in usage.prompt_tokens (for server_input_counted requests). Added by the
  // worker, which knows the prompt; they disagree when the server's tokenizer is not the pool's.
  std::int64_t client_input_tokens = 0, server_input_tokens = 0;
  std::uint64_t server_input_counted = 0;
  std::uint64_t usage_counted = 0, chunk_counted = 0;  // where successful requests' token counts came from
  LatencyHistogram ttft, tpot, itl, e2el, queue;       // nanoseconds; ttft, e2el from the send (vLLM's)
  LatencyHistogram ttft_from_schedule, e2el_from_schedule;  // ... from when each was due (queue included)
  std::array<std::uint64_t, kErrorKinds> errors{};
  std::map<int, std::uint64_t> statuses;               // HTTP status -> requests (all, failed or not)
  std::map<std::string, std::vector<std::string>> error_samples;  // kind -> first messages
  std::int64_t first_sent_ns = -1;  // the measured window: first measured send ...
  std::int64_t last_sent_ns = -1, first_due_ns = -1, last_due_ns = -1;  // for the send rates
  std::int64_t last_done_ns = -1;   // ... to the last measured response
  std::vector<std::uint32_t> tokens_per_second;  // token events per whole second since the start
  // CPU time the load generator's worker threads used (CLOCK_THREAD_CPUTIME_ID over each one's
  // event loop): against threads × wall time, how close the client came to being the limit.
  double client_cpu_s = 0;

  static constexpr std::size_t kSamplesPerKind = 5;
};

}  // namespace runara

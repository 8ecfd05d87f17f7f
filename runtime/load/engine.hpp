// Runs one load (a LoadSpec) on worker threads, off the Lua thread: starts the workers, shows a
// live progress line from the run's loop, and when every worker is done (or abort() was called)
// gathers their statistics into one LoadOutcome. Each finished request's record goes to the
// RequestLog given (requests.jsonl, written as the load runs); what the engine gathers at the end
// is bounded whatever the number of requests.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "load/spec.hpp"
#include "load/stats.hpp"
#include "load/request_details.hpp"
#include "load/request_lengths.hpp"
#include "load/request_log.hpp"

typedef struct uv_loop_s uv_loop_t;

namespace runara {

struct LoadOutcome {
  LoadStats stats;
  RequestLengths lengths;              // input_lens / output_lens
  RequestDetails details;              // save_detailed: ttfts, itls, generated_texts, errors
  // requests.jsonl's writer, every worker's records handed over: finish() it (off the loop) to
  // have the file complete. Null when the load had none.
  std::shared_ptr<RequestLog> request_log;
  double wall_s = 0;                   // from start to the last worker done
  std::uint64_t abandoned = 0;         // cut short by abort()
  std::int64_t max_in_flight = 0;
  bool interrupted = false;            // abort() ended it
  int threads = 0;
  std::string error;                   // why the load stopped early (gave up, out of memory)
  std::uint64_t left_out = 0;          // finished requests not in requests.jsonl (max_request_lines, a full queue)
  MemoryReservation held;              // what the workers and the lengths took from the run's budget
  // Where the load ran: "" here; the machine's address when the remote agent ran it, with the
  // round trip from runara to the agent (ms; -1 unknown): what a local run would have added.
  std::string load_host;
  double controller_rtt_ms = -1;
  long agent_max_rss_kb = -1;  // the agent's peak resident memory (getrusage); -1: local, or unknown
};

// What runs one point of a load: this process's LoadEngine, or the remote load agent
// (load_job/remote_load.hpp) doing the same on another machine. LoadJob sees only this.
class LoadRunner {
 public:
  using Progress = std::function<void(const std::string& line)>;
  using Done = std::function<void(LoadOutcome&)>;
  virtual ~LoadRunner() = default;
  // Where finished requests' records go (before start(); without it they are only counted).
  virtual void write_requests_to(std::shared_ptr<RequestLog> log) = 0;
  // Starts the load; `done` runs on the loop once, when it has finished.
  virtual void start(Done done) = 0;
  // Stops the load now: returns what was measured so far. `done` is not called afterwards.
  virtual LoadOutcome abort() = 0;
};

class LoadEngine final : public LoadRunner {
 public:
  LoadEngine(uv_loop_t* loop, std::shared_ptr<const LoadSpec> spec, Progress progress);
  ~LoadEngine() override;  // aborts and joins if still running
  LoadEngine(const LoadEngine&) = delete;
  LoadEngine& operator=(const LoadEngine&) = delete;

  void write_requests_to(std::shared_ptr<RequestLog> log) override;
  void start(Done done) override;
  // Stops the workers now and waits for them (a few ms).
  LoadOutcome abort() override;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// How many requests each of `threads` workers keeps in flight for `total` (0 stays 0: unbounded).
std::vector<int> split_slots(int total, int threads);

}  // namespace runara

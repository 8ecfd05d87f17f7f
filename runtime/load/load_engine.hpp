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

#include "load/load_spec.hpp"
#include "load/load_stats.hpp"
#include "load/request_lengths.hpp"
#include "load/request_log.hpp"

typedef struct uv_loop_s uv_loop_t;

namespace runara {

struct LoadOutcome {
  LoadStats stats;
  RequestLengths lengths;              // input_lens / output_lens
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
};

class LoadEngine {
 public:
  using Progress = std::function<void(const std::string& line)>;
  using Done = std::function<void(LoadOutcome&)>;

  LoadEngine(uv_loop_t* loop, std::shared_ptr<const LoadSpec> spec, Progress progress);
  ~LoadEngine();  // aborts and joins if still running
  LoadEngine(const LoadEngine&) = delete;
  LoadEngine& operator=(const LoadEngine&) = delete;

  // Where finished requests' records go (before start(); without it they are only counted).
  void write_requests_to(std::shared_ptr<RequestLog> log);
  // Starts the load; `done` runs on `loop` once, when it has finished.
  void start(Done done);
  // Stops the workers now and waits for them (a few ms): returns what was measured so far.
  // `done` is not called afterwards.
  LoadOutcome abort();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// How many requests each of `threads` workers keeps in flight for `total` (0 stays 0: unbounded).
std::vector<int> split_slots(int total, int threads);

}  // namespace runara

// One worker thread of a load: its own libuv loop, the scheduling of its requests (closed loop:
// each slot sends again when its request ends; open loop: sends when the shared schedule says),
// and the statistics of the requests it ran (bounded: histograms, counters). How requests travel
// is its transport's business (load/transport.hpp), whether a response succeeded its judge's
// (response_judge.hpp). Each finished request's record goes to requests.jsonl's writer in
// batches (LoadShared::request_log) as the load runs. Nothing here touches Lua; the engine
// (load/engine.hpp) starts, stops and collects the workers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/latency_histogram.hpp"
#include "load/shared.hpp"
#include "load/stats.hpp"
#include "load/request_details.hpp"
#include "load/request_lengths.hpp"

namespace runara {

// What the progress line reads while the load runs (under the worker's lock).
struct WorkerProgress {
  std::uint64_t completed = 0, failed = 0;
  LatencyHistogram ttft{LatencyHistogram::kOneHourNs, 2};
  LatencyHistogram itl{LatencyHistogram::kOneHourNs, 2};
};

class LoadWorker {
 public:
  // `slots`: how many requests this worker keeps in flight at most (0: unbounded, open loop).
  // `finished` runs on the worker's thread once it has nothing more to do.
  LoadWorker(LoadShared& shared, int slots, std::function<void()> finished);
  ~LoadWorker();  // joins
  LoadWorker(const LoadWorker&) = delete;
  LoadWorker& operator=(const LoadWorker&) = delete;

  void start();
  void stop();  // from any thread: abandons requests in flight and finishes soon
  void join();

  // After join():
  LoadStats& stats();
  RequestLengths& lengths();
  RequestDetails& details();        // save_detailed's per-request arrays (empty otherwise)
  std::uint64_t abandoned() const;  // requests cut short by stop()
  std::uint64_t left_out() const;   // finished requests not handed to requests.jsonl's writer (the bound, a full queue)
  MemoryReservation& held();        // what the slots took from the run's budget

  // While running, from any thread:
  void read_progress(const std::function<void(const WorkerProgress&)>& reader);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
};

}  // namespace runara

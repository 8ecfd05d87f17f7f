// vLLM's --save-detailed arrays (`save_detailed = true`): each measured request's TTFT, its
// inter-token latencies, its generated text and its error, in request order, as
// `vllm bench serve --save-detailed` writes them (ttfts and itls in seconds, TTFT from the send;
// 0.0 and "" for a request that got no token; errors "" for a success). input_lens/output_lens
// are RequestLengths'.
//
// Contract. Kept only when the load asks (nothing is held otherwise). One RequestDetails per
// worker thread, add() on that thread; the engine merges them after the workers are joined.
// Bounded twice: at most `max` measured requests in the load (the workers share one `taken`
// counter, as RequestLengths'), and every byte kept (the entry, its gaps, text and error) is
// charged to the run's memory budget (--max-memory) as it is kept. Past either bound the worker
// drops what it kept and gives the memory back; the arrays are then null in results.json and
// `detailed_left_out` says why, so a soak cannot grow without bound. to_json's copy (JSON nodes
// and copies of the texts, made while the details are still held) is charged too, until the
// details go: without room for it the arrays are null in the same way.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/request_record.hpp"
#include "runara/memory_budget.hpp"

namespace runara {

class RequestDetails {
 public:
  RequestDetails() = default;
  // `memory`: the run's budget (null: unbounded, tests).
  RequestDetails(std::size_t max, std::shared_ptr<MemoryBudget> memory);

  // A finished request: `gaps` between its token events (ns), its `text`, its error `message`
  // ("" when it succeeded). Warm-up requests are not kept (vLLM's arrays have measured ones only).
  void add(const RequestRecord& r, const std::vector<std::int64_t>& gaps, const std::string& text,
           const std::string& message, std::atomic<std::uint64_t>& taken);
  void merge(RequestDetails&& other);
  // Keeps nothing (more), for `why`: the arrays are null.
  void overflow(std::string why);
  bool complete() const { return why_.empty(); }
  std::size_t size() const { return kept_.size(); }
  // ttfts, itls, generated_texts and errors into `out` (arrays in request order, or null with
  // detailed_left_out saying why, also when the budget has no room for the copy).
  void to_json(nlohmann::json& out) const;

 private:
  struct Entry {
    std::uint64_t index;
    std::int64_t ttft_ns;  // -1: no token
    std::vector<std::int64_t> itls;
    std::string text, error;
  };
  std::size_t max_ = 0;
  std::shared_ptr<MemoryBudget> memory_;
  MemoryReservation held_;
  std::size_t json_bytes() const;
  // to_json's copy, charged while this lives (the result it went into goes with the outcome).
  mutable MemoryReservation copy_held_;
  std::deque<Entry> kept_;
  std::string why_;  // why nothing is kept; "" while complete
};

}  // namespace runara

// vLLM's input_lens / output_lens: each measured request's token counts, in request order, kept
// only while a load has measured at most `max` requests (100,000 by default). Past that the
// arrays are null in results.json (requests.jsonl has the counts), and every worker drops what
// it kept, so a soak's memory does not grow with its length.
//
// Contract. One RequestLengths per worker thread, add() on that thread; the workers of a load
// share one `taken` counter (LoadShared), so they all stop keeping at the same request. The
// engine merges them after the workers are joined. The counter may start past `max` (the
// run's memory budget had no room): then nothing is kept and the arrays are null.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>

#include <nlohmann/json.hpp>

#include "load/request_record.hpp"

namespace runara {

class RequestLengths {
 public:
  static constexpr std::size_t kDefaultMax = 100000;
  // What one kept request costs, with the deque's blocks: the figure reserved per request.
  static constexpr std::size_t kBytesEach = 24;

  RequestLengths() = default;
  explicit RequestLengths(std::size_t max) : max_(max) {}

  // A finished request (warm-up requests are not kept: vLLM's arrays have measured ones only).
  void add(const RequestRecord& r, std::atomic<std::uint64_t>& taken);
  void merge(RequestLengths&& other);
  // Keeps nothing (more): the arrays are null.
  void overflow();
  // Every measured request's counts are here (false once more than `max` were measured).
  bool complete() const { return !overflowed_; }
  std::size_t size() const { return kept_.size(); }
  // input_lens and output_lens into `out`: arrays in request order, or null when incomplete.
  void to_json(nlohmann::json& out) const;

 private:
  struct Entry {
    std::uint64_t index;
    std::int32_t input, output;
  };
  std::size_t max_ = kDefaultMax;
  std::deque<Entry> kept_;
  bool overflowed_ = false;
};

}  // namespace runara

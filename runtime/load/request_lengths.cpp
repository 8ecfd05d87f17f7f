#include "load/request_lengths.hpp"

#include <algorithm>
#include <vector>

namespace runara {

void RequestLengths::add(const RequestRecord& r, std::atomic<std::uint64_t>& taken) {
  if (r.warmup || overflowed_) return;
  if (taken.fetch_add(1, std::memory_order_relaxed) >= max_) return overflow();  // frees the memory now
  kept_.push_back({r.index, std::max(r.input_tokens, 0), r.ok() ? r.output_tokens : 0});  // vLLM: 0 for a failure
}

void RequestLengths::overflow() {
  overflowed_ = true;
  std::deque<Entry>().swap(kept_);
}

void RequestLengths::merge(RequestLengths&& other) {
  if (overflowed_ || other.overflowed_) overflow();
  else kept_.insert(kept_.end(), other.kept_.begin(), other.kept_.end());
  std::deque<Entry>().swap(other.kept_);
}

void RequestLengths::to_json(nlohmann::json& out) const {
  if (overflowed_) {
    out["input_lens"] = nullptr;
    out["output_lens"] = nullptr;
    return;
  }
  std::vector<Entry> sorted(kept_.begin(), kept_.end());
  std::sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) { return a.index < b.index; });
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (const Entry& e : sorted) {
    inputs.push_back(e.input);
    outputs.push_back(e.output);
  }
  out["input_lens"] = std::move(inputs);
  out["output_lens"] = std::move(outputs);
}

}  // namespace runara

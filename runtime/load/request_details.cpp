#include "load/request_details.hpp"

#include <algorithm>

namespace runara {

RequestDetails::RequestDetails(std::size_t max, std::shared_ptr<MemoryBudget> memory)
    : max_(max), memory_(std::move(memory)), held_(memory_, 0), copy_held_(memory_, 0) {}

void RequestDetails::add(const RequestRecord& r, const std::vector<std::int64_t>& gaps, const std::string& text,
                         const std::string& message, std::atomic<std::uint64_t>& taken) {
  if (r.warmup || !why_.empty()) return;
  if (taken.fetch_add(1, std::memory_order_relaxed) >= max_) {
    return overflow("more than " + std::to_string(max_) + " measured requests (the bound on the per-request arrays); "
                    "requests.jsonl has each request's ttft_ms");
  }
  const std::size_t bytes = sizeof(Entry) + gaps.size() * sizeof(std::int64_t) + text.size() + message.size();
  if (memory_ && !held_.grow(bytes)) {
    return overflow(memory_->refusal(bytes, "the per-request details of save_detailed (" +
                                                std::to_string(kept_.size() + 1) + " requests kept)"));
  }
  const std::int64_t ttft = r.first_token_ns < 0 ? -1 : r.first_token_ns - r.sent_ns;
  kept_.push_back({r.index, ttft, gaps, text, r.ok() ? std::string() : message});
}

void RequestDetails::overflow(std::string why) {
  if (why_.empty()) why_ = std::move(why);
  std::deque<Entry>().swap(kept_);
  held_.reset();
}

void RequestDetails::merge(RequestDetails&& other) {
  if (!other.why_.empty()) overflow(other.why_);
  if (why_.empty()) {
    for (Entry& e : other.kept_) kept_.push_back(std::move(e));
    held_.absorb(std::move(other.held_));
  }
  other.overflow("merged");
}

// The JSON copy's size, roughly: a node (16 bytes) per ttft, per ITL and per array slot, a string
// object per text and error with its characters, and an array per request's ITLs.
std::size_t RequestDetails::json_bytes() const {
  constexpr std::size_t kNode = sizeof(nlohmann::json);
  std::size_t bytes = 0;
  for (const Entry& e : kept_) {
    bytes += 4 * kNode + 2 * sizeof(std::string) + sizeof(nlohmann::json::array_t) + e.itls.size() * kNode +
             e.text.size() + e.error.size();
  }
  return bytes;
}

void RequestDetails::to_json(nlohmann::json& out) const {
  const char* const keys[] = {"ttfts", "itls", "generated_texts", "errors"};
  // The copy is made while the details are still held: it is charged too, or not made.
  std::string why = why_;
  copy_held_.reset();
  if (why.empty() && memory_) {
    const std::size_t bytes = json_bytes();
    if (!copy_held_.grow(bytes)) {
      why = memory_->refusal(bytes, "the JSON copy of save_detailed's per-request details (" +
                                        std::to_string(kept_.size()) + " requests kept)");
    }
  }
  if (!why.empty()) {
    for (const char* key : keys) out[key] = nullptr;
    out["detailed_left_out"] = why;
    return;
  }
  std::vector<const Entry*> sorted;
  sorted.reserve(kept_.size());
  for (const Entry& e : kept_) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) { return a->index < b->index; });
  nlohmann::json ttfts = nlohmann::json::array(), itls = nlohmann::json::array(), texts = nlohmann::json::array(),
                 errors = nlohmann::json::array();
  for (const Entry* e : sorted) {
    ttfts.push_back(e->ttft_ns < 0 ? 0.0 : static_cast<double>(e->ttft_ns) / 1e9);  // vLLM: seconds, 0.0 without a token
    nlohmann::json gaps = nlohmann::json::array();
    for (std::int64_t gap : e->itls) gaps.push_back(static_cast<double>(gap) / 1e9);
    itls.push_back(std::move(gaps));
    texts.push_back(e->text);
    errors.push_back(e->error);
  }
  out["ttfts"] = std::move(ttfts);
  out["itls"] = std::move(itls);
  out["generated_texts"] = std::move(texts);
  out["errors"] = std::move(errors);
  out["detailed_left_out"] = nullptr;
}

}  // namespace runara

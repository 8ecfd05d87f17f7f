#include "load/stats.hpp"

#include <algorithm>

namespace runara {

bool Slo::met_by(const RequestRecord& r) const {
  if (!r.ok()) return false;
  if (ttft_ms > 0 && !(r.ttft_ms() >= 0 && r.ttft_ms() <= ttft_ms)) return false;
  if (tpot_ms > 0 && r.tpot_ms() > tpot_ms) return false;  // one-token replies have no TPOT
  if (e2el_ms > 0 && !(r.e2el_ms() >= 0 && r.e2el_ms() <= e2el_ms)) return false;
  return true;
}


void LoadStats::add(const RequestRecord& r, const std::vector<std::int64_t>& itl_ns,
                    const std::string& error_message) {
  if (r.status != 0) ++statuses[r.status];
  if (r.warmup) {
    ++warmup;
    return;
  }
  if (first_sent_ns < 0 || r.sent_ns < first_sent_ns) first_sent_ns = r.sent_ns;
  last_sent_ns = std::max(last_sent_ns, r.sent_ns);
  if (first_due_ns < 0 || r.intended_ns < first_due_ns) first_due_ns = r.intended_ns;
  last_due_ns = std::max(last_due_ns, r.intended_ns);
  const std::int64_t end = r.done_ns >= 0 ? r.done_ns : r.sent_ns;
  last_done_ns = std::max(last_done_ns, end);
  if (!r.ok()) {
    ++failed;
    ++errors[static_cast<int>(r.error)];
    auto& samples = error_samples[std::string(error_kind_name(r.error))];
    if (samples.size() < kSamplesPerKind && !error_message.empty()) samples.push_back(error_message);
    return;
  }
  ++completed;
  if (slo.any() && slo.met_by(r)) ++good;
  input_tokens += std::max(r.input_tokens, 0);
  output_tokens += r.output_tokens;
  ++(r.tokens_from_usage ? usage_counted : chunk_counted);
  if (r.first_token_ns >= 0) {
    ttft.record(r.first_token_ns - r.sent_ns);
    ttft_from_schedule.record(r.first_token_ns - r.intended_ns);
  }
  if (r.done_ns >= 0) {
    e2el.record(r.done_ns - r.sent_ns);
    e2el_from_schedule.record(r.done_ns - r.intended_ns);
  }
  queue.record(r.sent_ns - r.intended_ns);
  if (r.tpot_ms() >= 0) tpot.record((r.done_ns - r.first_token_ns) / (r.output_tokens - 1));
  for (std::int64_t gap : itl_ns) itl.record(gap);
}

void LoadStats::add_tokens_at(std::int64_t at_ns, int tokens) {
  if (at_ns < 0 || tokens <= 0) return;
  const auto second = static_cast<std::size_t>(at_ns / 1'000'000'000);
  if (second >= tokens_per_second.size()) tokens_per_second.resize(second + 1, 0);
  tokens_per_second[second] += static_cast<std::uint32_t>(tokens);
}

void LoadStats::merge(const LoadStats& o) {
  completed += o.completed;
  failed += o.failed;
  warmup += o.warmup;
  good += o.good;
  input_tokens += o.input_tokens;
  output_tokens += o.output_tokens;
  usage_counted += o.usage_counted;
  client_input_tokens += o.client_input_tokens;
  server_input_tokens += o.server_input_tokens;
  server_input_counted += o.server_input_counted;
  chunk_counted += o.chunk_counted;
  client_cpu_s += o.client_cpu_s;
  ttft.merge(o.ttft);
  tpot.merge(o.tpot);
  itl.merge(o.itl);
  e2el.merge(o.e2el);
  queue.merge(o.queue);
  ttft_from_schedule.merge(o.ttft_from_schedule);
  e2el_from_schedule.merge(o.e2el_from_schedule);
  for (int i = 0; i < kErrorKinds; ++i) errors[i] += o.errors[i];
  for (const auto& [status, n] : o.statuses) statuses[status] += n;
  for (const auto& [kind, messages] : o.error_samples) {
    auto& mine = error_samples[kind];
    for (const auto& m : messages) {
      if (mine.size() < kSamplesPerKind) mine.push_back(m);
    }
  }
  if (o.first_sent_ns >= 0 && (first_sent_ns < 0 || o.first_sent_ns < first_sent_ns)) first_sent_ns = o.first_sent_ns;
  last_done_ns = std::max(last_done_ns, o.last_done_ns);
  last_sent_ns = std::max(last_sent_ns, o.last_sent_ns);
  if (o.first_due_ns >= 0 && (first_due_ns < 0 || o.first_due_ns < first_due_ns)) first_due_ns = o.first_due_ns;
  last_due_ns = std::max(last_due_ns, o.last_due_ns);
  if (o.tokens_per_second.size() > tokens_per_second.size()) tokens_per_second.resize(o.tokens_per_second.size(), 0);
  for (std::size_t i = 0; i < o.tokens_per_second.size(); ++i) tokens_per_second[i] += o.tokens_per_second[i];
}

}  // namespace runara

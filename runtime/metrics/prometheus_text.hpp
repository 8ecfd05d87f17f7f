// Prometheus text exposition format 0.0.4 (what vLLM, SGLang and most servers serve on
// /metrics): `# HELP` / `# TYPE` lines and samples `name{label="value",...} value [timestamp]`.
// Label values are unescaped (\\, \", \n); values may be NaN, +Inf, -Inf. A sample belongs to
// the family its TYPE line names, with the histogram/summary suffixes _bucket, _sum, _count and
// _created folded into it.
//
// Contract: a pure function (no I/O, no Lua, any thread), linear in the text, never throws. A
// malformed line fails the whole parse, as a Prometheus scrape would, with an error naming the
// line number, what was expected and the start of the line. Bounded, whatever the server sends
// (docs/gpu_metrics.md): at most kMaxSamples samples, kMaxFamilies families, lines of kMaxLine
// bytes, and a parse whose estimated size (PromParse::bytes: every string, label, vector slot and
// map node, not only the text's bytes) stays within kMaxParsedBytes. Scrapes read at most
// kMaxBodyBytes of text.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace runara::metrics {

// Far above any real server's: vLLM's /metrics is about 1,000 samples and 100 KiB.
inline constexpr std::size_t kMaxBodyBytes = std::size_t{4} << 20;
inline constexpr std::size_t kMaxSamples = 50000;
inline constexpr std::size_t kMaxFamilies = 50000;
inline constexpr std::size_t kMaxLine = 64u << 10;
inline constexpr std::size_t kMaxParsedBytes = std::size_t{16} << 20;

struct PromSample {
  std::string name;  // as written: "vllm:e2e_request_latency_seconds_bucket"
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written
  double value = 0;
  std::optional<std::int64_t> timestamp_ms;
  std::string family;  // the family it belongs to ("vllm:e2e_request_latency_seconds")
};

struct PromFamily {
  std::string type = "untyped";  // counter, gauge, histogram, summary, untyped
  std::string help;
};

struct PromParse {
  std::vector<PromSample> samples;
  std::map<std::string, PromFamily> families;  // every family a sample or a HELP/TYPE line named
  std::string error;                           // "" on success
  std::size_t bytes = 0;                       // what samples and families hold, estimated
};

PromParse parse_prometheus_text(std::string_view text);

// The sum over label sets of each sample name, leaving out histogram buckets and summary
// quantiles (adding those up means nothing): {"vllm:num_requests_running": 3, ...}.
std::map<std::string, double> prometheus_totals(const PromParse& p);

}  // namespace runara::metrics

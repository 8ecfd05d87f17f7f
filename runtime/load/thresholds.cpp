#include "load/thresholds.hpp"

#include <cmath>
#include <cstdio>

#include "base/did_you_mean.hpp"

namespace runara {

namespace {

const char* const kMetrics[] = {"ttft", "tpot", "itl", "e2el", "queue", "ttft_from_schedule", "e2el_from_schedule"};
const char* const kStats[] = {"mean", "median", "p50", "p90", "p95", "p99", "p99.9", "max"};
const char* const kLowerBounds[][2] = {{"min_request_throughput", "request_throughput"},
                                       {"min_output_throughput", "output_throughput"},
                                       {"min_total_token_throughput", "total_token_throughput"},
                                       {"min_goodput", "request_goodput"}};

std::string figure(double v) {
  char text[48];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

// The value a threshold is checked against; NaN when the load did not measure it.
double measured(const Threshold& t, const nlohmann::json& r) {
  if (t.key.empty()) {  // failure_rate
    const double done = r.value("completed", 0.0), failed = r.value("failed", 0.0);
    return done + failed > 0 ? failed / (done + failed) : NAN;
  }
  const auto it = r.find(t.key);
  if (it == r.end() || !it->is_number()) return NAN;
  // Latencies of a load with no successful request read 0: that is no measurement.
  if (t.upper && r.value("completed", 0.0) == 0) return NAN;
  return it->get<double>();
}

}  // namespace

std::vector<std::string> threshold_names() {
  std::vector<std::string> names{"failure_rate"};
  for (const char* metric : kMetrics) {
    for (const char* stat : kStats) names.push_back(std::string(metric) + "_" + stat + "_ms");
  }
  for (const auto& pair : kLowerBounds) names.push_back(pair[0]);
  return names;
}

Result<Threshold> parse_threshold(const std::string& name, double limit) {
  if (!std::isfinite(limit) || limit < 0) {
    return Error{"threshold '" + name + "' must be a number >= 0, got " + figure(limit)};
  }
  Threshold out{name, "", true, limit};
  if (name == "failure_rate") {
    if (limit > 1) return Error{"threshold 'failure_rate' is a fraction between 0 and 1, got " + figure(limit)};
    return out;
  }
  for (const auto& pair : kLowerBounds) {
    if (name == pair[0]) {
      out.key = pair[1];
      out.upper = false;
      return out;
    }
  }
  for (const char* metric : kMetrics) {
    for (const char* stat : kStats) {
      if (name == std::string(metric) + "_" + stat + "_ms") {
        out.key = std::string(stat) + "_" + metric + "_ms";
        return out;
      }
    }
  }
  const std::string shown = name.size() > 64 ? name.substr(0, 64) + "..." : name;  // a hostile name stays short
  return Error{"unknown threshold '" + shown + "'" + did_you_mean(name, threshold_names()) +
         " (names are METRIC_STAT_ms with METRIC ttft, tpot, itl, e2el, queue, ttft_from_schedule or e2el_from_schedule and STAT mean, median, p50, "
         "p90, p95, p99, p99.9 or max; failure_rate; min_request_throughput, min_output_throughput, "
         "min_total_token_throughput, min_goodput)"};
}

void apply_thresholds(const Thresholds& thresholds, nlohmann::json& r) {
  if (thresholds.empty()) return;
  nlohmann::json all = nlohmann::json::object(), crossed = nlohmann::json::array();
  for (const auto& t : thresholds) {
    const double value = measured(t, r);
    const bool ok = !std::isnan(value) && (t.upper ? value <= t.limit : value >= t.limit);
    all[t.name] = {{"limit", t.limit}, {"value", std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value)}, {"ok", ok}};
    if (ok) continue;
    crossed.push_back(t.name + ": " + (std::isnan(value) ? "not measured (limit " + figure(t.limit) + ")"
                                                         : figure(value) + (t.upper ? " > " : " < ") + figure(t.limit)));
  }
  r["thresholds"] = all;
  r["thresholds_crossed"] = crossed;
}

}  // namespace runara

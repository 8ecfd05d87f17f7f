// Latency histogram: percentile accuracy against sorted exact values, exact
// summary statistics, merging, bounded memory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "http/latency_histogram.hpp"

using runara::LatencyHistogram;

namespace {

int64_t exact_percentile(const std::vector<int64_t>& sorted, double q) {
  if (q <= 0) return sorted.front();
  if (q >= 100) return sorted.back();
  size_t n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(q / 100.0 * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, n);
  return sorted[rank - 1];
}

// Log-uniform values between lo and hi: every magnitude gets samples.
std::vector<int64_t> log_uniform(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
  std::vector<int64_t> v(n);
  for (auto& x : v) x = static_cast<int64_t>(std::exp(u(rng)));
  return v;
}

void check_against_exact(const LatencyHistogram& h, std::vector<int64_t> values) {
  std::sort(values.begin(), values.end());
  REQUIRE(h.count() == values.size());
  CHECK(h.min() == values.front());
  CHECK(h.max() == values.back());
  long double sum = 0;
  for (int64_t v : values) sum += v;
  long double mean = sum / values.size();
  long double ss = 0;
  for (int64_t v : values) ss += (v - mean) * (v - mean);
  double stddev = static_cast<double>(std::sqrt(ss / values.size()));
  CHECK(h.mean() == Approx(static_cast<double>(mean)).epsilon(1e-12));
  CHECK(h.stddev() == Approx(stddev).epsilon(1e-9));
  for (double q : {0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0}) {
    int64_t exact = exact_percentile(values, q);
    int64_t got = h.percentile(q);
    double rel = std::abs(static_cast<double>(got - exact)) / static_cast<double>(std::max<int64_t>(exact, 1));
    INFO("q=" << q << " exact=" << exact << " got=" << got);
    CHECK(rel <= h.max_relative_error());
    CHECK(rel <= 0.001);
  }
}

}  // namespace

TEST_CASE("Histogram: percentiles within 0.1% of the exact values (ns, 1 us .. 1 h)", "[histogram]") {
  LatencyHistogram h;  // nanoseconds up to one hour
  CHECK(h.max_relative_error() <= 0.0005);
  auto values = log_uniform(200000, 1e3, 3.6e12, 1);
  for (int64_t v : values) h.record(v);
  check_against_exact(h, values);
}

TEST_CASE("Histogram: microsecond values and a latency-like distribution", "[histogram]") {
  LatencyHistogram h(3'600'000'000);  // microseconds up to one hour
  std::mt19937_64 rng(2);
  std::lognormal_distribution<double> ln(std::log(20000.0), 0.6);  // ~20 ms median
  std::vector<int64_t> values;
  for (int i = 0; i < 100000; ++i) {
    int64_t v = std::max<int64_t>(1, static_cast<int64_t>(ln(rng)));
    if (i % 1000 == 0) v = 5'000'000 + i;  // a tail of 5 s stalls
    values.push_back(v);
    h.record(v);
  }
  check_against_exact(h, values);
}

TEST_CASE("Histogram: small values are exact, edges and saturation", "[histogram]") {
  LatencyHistogram h(1'000'000);
  CHECK(h.count() == 0);
  CHECK(h.percentile(50) == 0);
  CHECK(h.mean() == 0);
  CHECK(h.stddev() == 0);
  for (int64_t v = 0; v < 2048; ++v) h.record(v);
  for (double q : {10.0, 50.0, 99.9}) {
    int64_t rank = static_cast<int64_t>(std::ceil(q / 100.0 * 2048));
    CHECK(h.percentile(q) == rank - 1);
  }
  h.record(-5);  // negative: recorded as 0
  CHECK(h.min() == 0);
  h.record(5'000'000'000);  // above the trackable range
  CHECK(h.saturated() == 1);
  CHECK(h.max() == 5'000'000'000);
  CHECK(h.percentile(100) == 5'000'000'000);
  h.record_n(700, 1000);
  CHECK(h.count() == 2048 + 2 + 1000);
  h.reset();
  CHECK(h.count() == 0);
  CHECK(h.saturated() == 0);
  h.record(42);
  CHECK(h.percentile(50) == 42);
  CHECK(h.stddev() == 0);
  CHECK_THROWS(LatencyHistogram(1));
  CHECK_THROWS(LatencyHistogram(1000, 0));
}

TEST_CASE("Histogram: merge of per-thread histograms equals one histogram", "[histogram]") {
  auto values = log_uniform(100000, 1e3, 1e10, 3);
  LatencyHistogram all;
  std::vector<LatencyHistogram> parts(4);
  for (size_t i = 0; i < values.size(); ++i) {
    all.record(values[i]);
    parts[i % 4].record(values[i]);
  }
  LatencyHistogram merged;
  for (const auto& p : parts) merged.merge(p);
  merged.merge(LatencyHistogram());  // empty: no effect
  CHECK(merged.count() == all.count());
  CHECK(merged.min() == all.min());
  CHECK(merged.max() == all.max());
  CHECK(merged.mean() == all.mean());
  CHECK(merged.stddev() == all.stddev());
  for (double q : {50.0, 90.0, 95.0, 99.0, 99.9}) CHECK(merged.percentile(q) == all.percentile(q));
  check_against_exact(merged, values);

  // A histogram of another shape merges by bucket midpoints.
  LatencyHistogram coarse(LatencyHistogram::kOneHourNs, 2);
  for (int64_t v : values) coarse.record(v);
  LatencyHistogram fine;
  fine.merge(coarse);
  CHECK(fine.count() == values.size());
  CHECK(fine.mean() == coarse.mean());
  std::sort(values.begin(), values.end());
  for (double q : {50.0, 99.0}) {
    double exact = static_cast<double>(exact_percentile(values, q));
    CHECK(std::abs(fine.percentile(q) - exact) / exact <= coarse.max_relative_error() + fine.max_relative_error());
  }
}

TEST_CASE("Histogram: merge and percentiles of histograms over disjoint ranges (only min..max is scanned)", "[histogram]") {
  // Merging and percentiles visit only the buckets between min and max: parts far apart, one
  // with a saturated value and one with 0, must still add up to the histogram of everything.
  LatencyHistogram low, high, all;
  for (int64_t v : {0, 1, 999, 5000, 12345}) {
    low.record(v);
    all.record(v);
  }
  for (int64_t v : {int64_t{900'000'000}, int64_t{2'000'000'000'000}, LatencyHistogram::kOneHourNs * 2}) {
    high.record(v);
    all.record(v);
  }
  LatencyHistogram merged;
  merged.merge(high);
  merged.merge(low);
  CHECK(merged.count() == all.count());
  CHECK(merged.saturated() == 1);
  for (double q : {1.0, 20.0, 50.0, 62.5, 75.0, 87.5, 99.0}) {
    INFO("q " << q);
    CHECK(merged.percentile(q) == all.percentile(q));
  }
  CHECK(merged.percentile(37.5) == 999);  // the 3rd of 8 values; exact below 2048
}

TEST_CASE("Histogram: memory is bounded and independent of the sample count", "[histogram]") {
  LatencyHistogram h;
  size_t before = h.memory_bytes();
  CHECK(h.bucket_slots() == 33792);
  CHECK(before < 300 * 1024);
  std::mt19937_64 rng(4);
  for (int i = 0; i < 1000000; ++i) h.record(static_cast<int64_t>(rng() % LatencyHistogram::kOneHourNs));
  CHECK(h.memory_bytes() == before);
  LatencyHistogram us(3'600'000'000);
  CHECK(us.memory_bytes() < 200 * 1024);
}

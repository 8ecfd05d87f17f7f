// Arrival schedule: constant spacing without drift, Poisson and gamma gaps
// with the right mean and coefficient of variation, determinism by seed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "load/arrival_schedule.hpp"

using runara::Arrival;
using runara::ArrivalSchedule;

namespace {

struct GapStats {
  double mean = 0;
  double cv = 0;             // standard deviation / mean
  double below_mean = 0;     // fraction of gaps shorter than the mean
};

GapStats gap_stats(ArrivalSchedule schedule, int gaps) {
  std::vector<double> g(gaps);
  std::int64_t previous = schedule.next_ns();
  REQUIRE(previous == 0);
  for (auto& x : g) {
    std::int64_t t = schedule.next_ns();
    REQUIRE(t >= previous);
    x = static_cast<double>(t - previous);
    previous = t;
  }
  GapStats s;
  for (double x : g) s.mean += x;
  s.mean /= gaps;
  double ss = 0;
  for (double x : g) {
    ss += (x - s.mean) * (x - s.mean);
    s.below_mean += x < s.mean;
  }
  s.cv = std::sqrt(ss / gaps) / s.mean;
  s.below_mean /= gaps;
  return s;
}

}  // namespace

TEST_CASE("Arrival: names", "[arrival]") {
  CHECK(runara::parse_arrival("constant") == Arrival::kConstant);
  CHECK(runara::parse_arrival("poisson") == Arrival::kPoisson);
  CHECK(runara::parse_arrival("gamma") == Arrival::kGamma);
  CHECK_FALSE(runara::parse_arrival("Poisson").has_value());
  CHECK_FALSE(runara::parse_arrival("").has_value());
}

TEST_CASE("Arrival: constant spacing does not drift over a million requests", "[arrival]") {
  ArrivalSchedule schedule(3.0, Arrival::kConstant, 1.0, 1);  // 333,333,333.3 ns apart
  std::int64_t previous = schedule.next_ns();
  CHECK(previous == 0);
  bool gaps_ok = true;
  for (int i = 1; i < 1'000'000; ++i) {
    std::int64_t t = schedule.next_ns();
    gaps_ok &= t - previous == 333'333'333 || t - previous == 333'333'334;
    previous = t;
  }
  CHECK(gaps_ok);
  // Summing rounded gaps would be 1e6 / 3 ns (about 0.33 ms) short by now.
  CHECK(schedule.next_ns() == 333'333'333'333'333);

  ArrivalSchedule exact(1000.0, Arrival::kConstant, 1.0, 1);
  for (std::int64_t i = 0; i < 1000; ++i) CHECK(exact.next_ns() == i * 1'000'000);
}

TEST_CASE("Arrival: Poisson gaps are exponential at the requested rate", "[arrival]") {
  auto s = gap_stats(ArrivalSchedule(100.0, Arrival::kPoisson, 1.0, 7), 200000);
  CHECK(s.mean == Approx(1e7).epsilon(0.01));  // 100 requests/s
  CHECK(s.cv == Approx(1.0).epsilon(0.02));
  CHECK(s.below_mean == Approx(1 - std::exp(-1.0)).margin(0.005));  // exponential CDF at the mean
}

TEST_CASE("Arrival: gamma burstiness sets the variation, not the rate", "[arrival]") {
  for (double shape : {0.5, 1.0, 4.0}) {
    INFO("burstiness " << shape);
    auto s = gap_stats(ArrivalSchedule(250.0, Arrival::kGamma, shape, 21), 200000);
    CHECK(s.mean == Approx(4e6).epsilon(0.015));  // 250 requests/s whatever the shape
    CHECK(s.cv == Approx(1 / std::sqrt(shape)).epsilon(0.03));
  }
}

TEST_CASE("Arrival: schedules are deterministic for a seed", "[arrival]") {
  for (Arrival kind : {Arrival::kPoisson, Arrival::kGamma}) {
    ArrivalSchedule a(50.0, kind, 0.7, 5), b(50.0, kind, 0.7, 5), c(50.0, kind, 0.7, 6);
    int same_as_other_seed = 0;
    for (int i = 0; i < 1000; ++i) {
      std::int64_t ta = a.next_ns();
      CHECK(ta == b.next_ns());
      same_as_other_seed += ta == c.next_ns();
    }
    CHECK(same_as_other_seed == 1);  // only the first request, at 0
  }
}

TEST_CASE("Arrival: invalid rate or burstiness", "[arrival]") {
  CHECK_THROWS_AS(ArrivalSchedule(0.0, Arrival::kConstant, 1.0, 1), std::invalid_argument);
  CHECK_THROWS_AS(ArrivalSchedule(-1.0, Arrival::kPoisson, 1.0, 1), std::invalid_argument);
  CHECK_THROWS_AS(ArrivalSchedule(NAN, Arrival::kPoisson, 1.0, 1), std::invalid_argument);
  CHECK_THROWS_AS(ArrivalSchedule(10.0, Arrival::kGamma, 0.0, 1), std::invalid_argument);
  // burstiness only matters for gamma
  CHECK_NOTHROW(ArrivalSchedule(10.0, Arrival::kPoisson, 0.0, 1));
}

// vLLM's ramp-up (benchmarks/serve.py, _get_current_request_rate): request i of n runs at
// start + (end - start)·i/(n-1) (linear) or start·(end/start)^(i/(n-1)) (exponential), and the gap
// after request i is drawn at request i's rate. With constant spacing the gaps are exactly
// 1/rate_i, computed here independently of the schedule.
TEST_CASE("Arrival: a ramp moves the rate from start to end over the requests, as vLLM's", "[arrival]") {
  const int n = 11;
  for (const auto ramp : {runara::Ramp::kLinear, runara::Ramp::kExponential}) {
    ArrivalSchedule schedule(20.0, Arrival::kConstant, 1.0, 7);
    schedule.set_ramp(ramp, 2.0, 20.0, n);
    double expected_ns = 0;
    CHECK(schedule.next_ns() == 0);
    for (int i = 1; i < n + 5; ++i) {
      const double progress = std::min(1.0, (i - 1) / double(n - 1));
      const double rate = ramp == runara::Ramp::kLinear ? 2.0 + 18.0 * progress : 2.0 * std::pow(10.0, progress);
      expected_ns += 1e9 / rate;
      CHECK(schedule.next_ns() == std::llround(expected_ns));  // past n requests the end rate holds
    }
  }
  // Poisson arrivals on a ramp: the late gaps are shorter than the early ones, on average.
  ArrivalSchedule poisson(100.0, Arrival::kPoisson, 1.0, 3);
  poisson.set_ramp(runara::Ramp::kLinear, 10.0, 100.0, 2000);
  std::int64_t previous = poisson.next_ns(), early = 0, late = 0;
  for (int i = 1; i < 2000; ++i) {
    const std::int64_t t = poisson.next_ns();
    (i <= 200 ? early : late) += i <= 200 || i > 1800 ? t - previous : 0;
    previous = t;
  }
  CHECK(early / 200 > 3 * (late / 199));
  CHECK(runara::parse_ramp("linear") == runara::Ramp::kLinear);
  CHECK(runara::parse_ramp("exponential") == runara::Ramp::kExponential);
  CHECK_FALSE(runara::parse_ramp("step"));
  ArrivalSchedule bad(10.0, Arrival::kPoisson, 1.0, 1);
  CHECK_THROWS_AS(bad.set_ramp(runara::Ramp::kLinear, 0.0, 10.0, 5), std::invalid_argument);
  CHECK_THROWS_AS(bad.set_ramp(runara::Ramp::kExponential, 1.0, 10.0, 0), std::invalid_argument);
}

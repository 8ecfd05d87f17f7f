// Arrival schedule: constant spacing without drift, Poisson and gamma gaps
// with the right mean and coefficient of variation, determinism by seed.
#include <catch2/catch.hpp>

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

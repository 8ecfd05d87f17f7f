// Arrival schedules: constant spacing from the request index, exponential and
// gamma gaps drawn from a seeded generator (Marsaglia-Tsang for the gamma).
#include "load/arrival_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace runara {

namespace {

constexpr double kNsPerSecond = 1e9;

// Standard normal by Box-Muller; 1 - u keeps the logarithm's argument in (0, 1].
double standard_normal(SeededRandom& rng) {
  double radius = std::sqrt(-2.0 * std::log(1.0 - rng.uniform01()));
  return radius * std::cos(2.0 * std::numbers::pi * rng.uniform01());
}

// Gamma(shape, 1) by Marsaglia and Tsang (2000). A shape below 1 samples
// shape + 1 and scales by u^(1/shape), their recommended boost.
double standard_gamma(double shape, SeededRandom& rng) {
  if (shape < 1.0) {
    double u = rng.uniform01();
    return standard_gamma(shape + 1.0, rng) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = standard_normal(rng);
    double v = 1.0 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = 1.0 - rng.uniform01();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

}  // namespace

std::optional<Arrival> parse_arrival(std::string_view name) {
  if (name == "constant") return Arrival::kConstant;
  if (name == "poisson") return Arrival::kPoisson;
  if (name == "gamma") return Arrival::kGamma;
  return std::nullopt;
}

std::optional<Ramp> parse_ramp(std::string_view name) {
  if (name == "linear") return Ramp::kLinear;
  if (name == "exponential") return Ramp::kExponential;
  return std::nullopt;
}

const char* ramp_name(Ramp ramp) {
  switch (ramp) {
    case Ramp::kLinear: return "linear";
    case Ramp::kExponential: return "exponential";
    case Ramp::kNone: break;
  }
  return "";
}

ArrivalSchedule::ArrivalSchedule(double rate, Arrival kind, double burstiness, std::uint64_t seed)
    : rate_(rate), kind_(kind), shape_(burstiness), rng_(seed) {
  if (!(rate > 0) || !std::isfinite(rate))
    throw std::invalid_argument("arrival schedule: rate must be a finite number > 0");
  if (kind == Arrival::kGamma && (!(burstiness > 0) || !std::isfinite(burstiness)))
    throw std::invalid_argument("arrival schedule: burstiness must be a finite number > 0");
}

void ArrivalSchedule::set_ramp(Ramp ramp, double start, double end, std::uint64_t total) {
  if (ramp == Ramp::kNone) return;
  if (!(start > 0) || !(end > 0) || !std::isfinite(start) || !std::isfinite(end))
    throw std::invalid_argument("arrival schedule: a ramp's start and end rates must be finite numbers > 0");
  if (total < 1) throw std::invalid_argument("arrival schedule: a ramp needs a number of requests");
  ramp_ = ramp;
  ramp_start_ = start;
  ramp_end_ = end;
  ramp_total_ = total;
}

double ArrivalSchedule::rate_at(std::uint64_t index) const {
  if (ramp_ == Ramp::kNone) return rate_;
  // Past the planned requests (warm-up by seconds, a duration that outlasts them) the end rate holds.
  const double progress = ramp_total_ > 1 ? std::min(1.0, static_cast<double>(index) / static_cast<double>(ramp_total_ - 1)) : 1.0;
  if (ramp_ == Ramp::kLinear) return ramp_start_ + (ramp_end_ - ramp_start_) * progress;
  return ramp_start_ * std::pow(ramp_end_ / ramp_start_, progress);
}

double ArrivalSchedule::gap_ns(double rate) {
  const double mean = kNsPerSecond / rate;
  if (kind_ == Arrival::kConstant) return mean;
  if (kind_ == Arrival::kPoisson) return -std::log(1.0 - rng_.uniform01()) * mean;
  // Scale 1 / (rate * shape): the mean gap stays 1 / rate for any shape.
  return standard_gamma(shape_, rng_) * mean / shape_;
}

std::int64_t ArrivalSchedule::next_ns() {
  const std::uint64_t i = index_++;
  if (kind_ == Arrival::kConstant && ramp_ == Ramp::kNone) {
    // From the index, not a running sum: rounded gaps would add up to drift.
    return std::llround(static_cast<double>(i) * kNsPerSecond / rate_);
  }
  if (i > 0) elapsed_ns_ += gap_ns(rate_at(i - 1));  // the gap after a request, at its rate (as vLLM)
  return std::llround(elapsed_ns_);
}

}  // namespace runara

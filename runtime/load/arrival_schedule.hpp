// When an open-loop load sends each request: constant spacing, a Poisson
// process, or gamma-distributed gaps of adjustable burstiness (vLLM's
// --burstiness), all at a chosen mean rate.
//
// It yields intended send times, computed ahead of any sending, so that a
// load generator can measure latency from when a request was due rather than
// from when a busy client got round to it (no coordinated omission).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "load/seeded_random.hpp"

namespace runara {

enum class Arrival { kConstant, kPoisson, kGamma };

// "constant", "poisson" or "gamma"; nullopt for anything else.
std::optional<Arrival> parse_arrival(std::string_view name);

// vLLM's --ramp-up-strategy: the rate moves from a start to an end rate over the load's
// requests, by request number (request i of n runs at start + (end - start)·i/(n-1), or
// start·(end/start)^(i/(n-1))), and the gap after a request is drawn at that request's rate.
enum class Ramp { kNone, kLinear, kExponential };
std::optional<Ramp> parse_ramp(std::string_view name);  // "linear" or "exponential"
const char* ramp_name(Ramp ramp);                        // "" for kNone

class ArrivalSchedule {
 public:
  // rate: requests per second (> 0). kConstant: exactly 1/rate apart.
  // kPoisson: exponential gaps of mean 1/rate. kGamma: gaps drawn from
  // gamma(shape = burstiness, scale = 1 / (rate * burstiness)), whose mean is
  // 1/rate whatever the burstiness (> 0; 1 is Poisson, < 1 burstier, > 1
  // more regular; the coefficient of variation is 1/sqrt(burstiness)).
  // burstiness is ignored by the other kinds. Deterministic for a seed.
  // Throws std::invalid_argument on a rate or burstiness out of range.
  ArrivalSchedule(double rate, Arrival kind, double burstiness, std::uint64_t seed);

  // Ramps the rate from start to end (both > 0) over `total` requests (>= 1) instead of
  // keeping it fixed. Throws std::invalid_argument on a value out of range.
  void set_ramp(Ramp ramp, double start, double end, std::uint64_t total);

  // Intended send time of the next request in ns after the start:
  // 0 for the first request, then non-decreasing.
  std::int64_t next_ns();

 private:
  double gap_ns(double rate);
  double rate_at(std::uint64_t index) const;

  double rate_;
  Arrival kind_;
  double shape_;
  SeededRandom rng_;
  Ramp ramp_ = Ramp::kNone;
  double ramp_start_ = 0, ramp_end_ = 0;
  std::uint64_t ramp_total_ = 1;
  std::uint64_t index_ = 0;
  double elapsed_ns_ = 0;  // sum of the random gaps, rounded only on output
};

}  // namespace runara

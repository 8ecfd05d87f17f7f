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

  // Intended send time of the next request in ns after the start:
  // 0 for the first request, then non-decreasing.
  std::int64_t next_ns();

 private:
  double gap_ns();

  double rate_;
  Arrival kind_;
  double shape_;
  SeededRandom rng_;
  std::uint64_t index_ = 0;
  double elapsed_ns_ = 0;  // sum of the random gaps, rounded only on output
};

}  // namespace runara

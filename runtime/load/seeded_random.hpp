// Small seeded random numbers for the load generator (SplitMix64).
//
// Hand-written rather than <random> because the standard distributions are
// implementation-defined: a benchmark's prompts and send times must come out
// the same for the same seed whatever compiler or standard library built it.
#pragma once

#include <cstdint>

namespace runara {

// SplitMix64's output function: a bijective 64-bit mix, good enough to turn
// (seed, index) pairs into independent-looking values without any state.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class SeededRandom {
 public:
  explicit SeededRandom(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t x = state_;
    state_ += 0x9E3779B97F4A7C15ull;
    return splitmix64(x);
  }
  // Uniform in [0, 1), 53 random bits.
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n) by multiply-high; the bias (n / 2^64) is far below
  // anything a benchmark could notice.
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

 private:
  std::uint64_t state_;
};

}  // namespace runara

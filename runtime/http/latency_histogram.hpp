// Bounded-memory log-linear latency histogram in the style of HdrHistogram.
//
// Values are non-negative integers in any unit the caller chooses
// (nanoseconds or microseconds). The range [0, highest_trackable] is split
// into power-of-two buckets, each cut into equal sub-buckets, so that every
// recorded value is known to within 1 / 2^(sub-bucket bits) of itself; with
// the default 3 significant figures (2048 sub-buckets) a percentile comes
// back within 0.05% of the exact sample it stands for (values below 2048 are
// exact). The default range, 1 ns .. 1 hour in nanoseconds, takes 33,792
// counters (264 KiB) whatever the number of samples.
//
// count, min, max, mean and stddev are exact (running sums in 128-bit
// integers; exact while values stay below 2^42 and counts below 2^40).
// Not thread-safe: keep one per thread and merge().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"

namespace runara {

class LatencyHistogram {
 public:
  static constexpr int64_t kOneHourNs = 3'600'000'000'000;

  // highest_trackable_value: the largest value kept at full precision (>= 2);
  // larger values are counted in the top bucket (see saturated()).
  // significant_figures: 1..5; 3 gives <= 0.05% percentile error.
  explicit LatencyHistogram(int64_t highest_trackable_value = kOneHourNs,
                            int significant_figures = 3);

  // Negative values are recorded as 0.
  void record(int64_t value) { record_n(value, 1); }
  void record_n(int64_t value, uint64_t count);

  // Adds other's samples. Histograms of the same shape add bucket by bucket;
  // otherwise each of other's buckets is re-recorded at its midpoint. The
  // exact statistics stay exact either way.
  void merge(const LatencyHistogram& other);
  void reset();

  uint64_t count() const { return count_; }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return count_ ? max_ : 0; }
  double mean() const;
  double stddev() const;  // population standard deviation
  // Samples above highest_trackable_value (kept in the top bucket).
  uint64_t saturated() const { return saturated_; }

  // The value at nearest rank ceil(q/100 * count) (q in [0, 100]; q <= 0 gives
  // min(), q >= 100 max()), reported as the middle of its bucket clamped to
  // [min(), max()]. 0 when empty.
  int64_t percentile(double q) const;

  int64_t highest_trackable_value() const { return highest_; }
  int significant_figures() const { return sig_figs_; }
  // Upper bound of |percentile - exact| / exact for in-range values.
  double max_relative_error() const;
  // The whole state, so that an equal histogram can be rebuilt elsewhere (the remote load agent
  // sends its histograms so): shape, exact statistics and the non-empty buckets in order.
  struct State {
    int64_t highest = kOneHourNs;
    int significant_figures = 3;
    uint64_t count = 0, saturated = 0;
    int64_t min = 0, max = 0;
    __int128 sum = 0;
    unsigned __int128 sum_sq = 0;
    std::vector<std::pair<uint32_t, uint64_t>> buckets;  // (slot, samples), samples > 0
  };
  State state() const;
  // A histogram equal to the one `s` came from; an error saying what is wrong for a state no
  // histogram could have (a bucket out of range or out of order, counts that do not add
  // up, min above max). Checks everything: the state may come from another machine.
  static Result<LatencyHistogram> from_state(const State& s);
  size_t memory_bytes() const { return sizeof(*this) + counts_.capacity() * sizeof(uint64_t); }
  size_t bucket_slots() const { return counts_.size(); }

 private:
  size_t index_of(int64_t value) const;
  // The buckets of min() and max(): every sample lies between them (only when count() > 0).
  size_t first_index() const;
  size_t last_index() const;
  int64_t lowest_at(size_t index) const;
  int64_t highest_at(size_t index) const;

  int64_t highest_;
  int sig_figs_;
  int sub_bucket_half_count_magnitude_;
  int64_t sub_bucket_half_count_;
  int64_t sub_bucket_mask_;
  int bucket_count_;
  std::vector<uint64_t> counts_;

  uint64_t count_ = 0;
  uint64_t saturated_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  __int128 sum_ = 0;
  unsigned __int128 sum_sq_ = 0;
};

}  // namespace runara

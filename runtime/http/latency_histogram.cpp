#include "http/latency_histogram.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace runara {

LatencyHistogram::LatencyHistogram(int64_t highest_trackable_value, int significant_figures)
    : highest_(highest_trackable_value), sig_figs_(significant_figures) {
  if (highest_ < 2) throw std::invalid_argument("LatencyHistogram: highest value must be >= 2");
  if (sig_figs_ < 1 || sig_figs_ > 5)
    throw std::invalid_argument("LatencyHistogram: significant figures must be 1..5");
  int64_t largest_single_unit = 2;
  for (int i = 0; i < sig_figs_; ++i) largest_single_unit *= 10;
  int magnitude = 0;
  while ((int64_t{1} << magnitude) < largest_single_unit) ++magnitude;  // ceil(log2)
  sub_bucket_half_count_magnitude_ = magnitude - 1;
  int64_t sub_bucket_count = int64_t{1} << magnitude;
  sub_bucket_half_count_ = sub_bucket_count / 2;
  sub_bucket_mask_ = sub_bucket_count - 1;
  // Buckets needed so that sub_bucket_count << (buckets - 1) > highest.
  int buckets = 1;
  int64_t smallest_untrackable = sub_bucket_count;
  while (smallest_untrackable <= highest_) {
    if (smallest_untrackable > INT64_MAX / 2) {
      ++buckets;
      break;
    }
    smallest_untrackable <<= 1;
    ++buckets;
  }
  bucket_count_ = buckets;
  counts_.assign(static_cast<size_t>((bucket_count_ + 1) * sub_bucket_half_count_), 0);
}

size_t LatencyHistogram::index_of(int64_t value) const {
  uint64_t v = static_cast<uint64_t>(value);
  int pow2ceiling = 64 - __builtin_clzll(v | static_cast<uint64_t>(sub_bucket_mask_));
  int bucket = pow2ceiling - (sub_bucket_half_count_magnitude_ + 1);
  int64_t sub_bucket = static_cast<int64_t>(v >> bucket);
  int64_t base = static_cast<int64_t>(bucket + 1) << sub_bucket_half_count_magnitude_;
  return static_cast<size_t>(base + (sub_bucket - sub_bucket_half_count_));
}

int64_t LatencyHistogram::lowest_at(size_t index) const {
  int64_t i = static_cast<int64_t>(index);
  int bucket = static_cast<int>(i >> sub_bucket_half_count_magnitude_) - 1;
  int64_t sub_bucket = (i & (sub_bucket_half_count_ - 1)) + sub_bucket_half_count_;
  if (bucket < 0) {
    sub_bucket -= sub_bucket_half_count_;
    bucket = 0;
  }
  return sub_bucket << bucket;
}

int64_t LatencyHistogram::highest_at(size_t index) const {
  int64_t i = static_cast<int64_t>(index);
  int bucket = std::max(0, static_cast<int>(i >> sub_bucket_half_count_magnitude_) - 1);
  return lowest_at(index) + (int64_t{1} << bucket) - 1;
}

size_t LatencyHistogram::first_index() const { return index_of(min_); }

size_t LatencyHistogram::last_index() const { return index_of(std::min(max_, highest_)); }

void LatencyHistogram::record_n(int64_t value, uint64_t count) {
  if (count == 0) return;
  if (value < 0) value = 0;
  int64_t tracked = value;
  if (value > highest_) {
    tracked = highest_;
    saturated_ += count;
  }
  counts_[index_of(tracked)] += count;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += count;
  sum_ += static_cast<__int128>(value) * count;
  sum_sq_ += static_cast<unsigned __int128>(value) * static_cast<unsigned __int128>(value) * count;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  if (other.highest_ == highest_ && other.sig_figs_ == sig_figs_) {
    // Only the buckets between other's min and max can hold anything: most of the 33,792 of a
    // 1 ns .. 1 h histogram stay empty, and a short load merges a handful.
    const size_t last = other.last_index();
    for (size_t i = other.first_index(); i <= last; ++i) counts_[i] += other.counts_[i];
  } else {
    for (size_t i = 0; i < other.counts_.size(); ++i) {
      if (!other.counts_[i]) continue;
      int64_t lo = other.lowest_at(i), hi = other.highest_at(i);
      int64_t mid = std::min(lo + (hi - lo) / 2, highest_);
      counts_[index_of(mid)] += other.counts_[i];
    }
  }
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  saturated_ += other.saturated_;
  sum_ += other.sum_;
  sum_sq_ += other.sum_sq_;
}

void LatencyHistogram::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = saturated_ = 0;
  min_ = max_ = 0;
  sum_ = 0;
  sum_sq_ = 0;
}

double LatencyHistogram::mean() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(static_cast<long double>(sum_) / static_cast<long double>(count_));
}

double LatencyHistogram::stddev() const {
  if (count_ == 0) return 0.0;
  // Exact sum of squared deviations from the integer part of the mean:
  // with q = sum / n, r = sum % n,  S_q = sum_sq - q * (sum + r),
  // and  sum (x - mean)^2 = S_q - r^2 / n.
  __int128 n = static_cast<__int128>(count_);
  __int128 q = sum_ / n;
  __int128 r = sum_ % n;
  __int128 s_q = static_cast<__int128>(sum_sq_) - q * (sum_ + r);
  long double ss = static_cast<long double>(s_q) -
                   static_cast<long double>(r) * static_cast<long double>(r) /
                       static_cast<long double>(count_);
  if (ss < 0) ss = 0;
  return static_cast<double>(std::sqrt(ss / static_cast<long double>(count_)));
}

int64_t LatencyHistogram::percentile(double q) const {
  if (count_ == 0) return 0;
  if (q <= 0) return min_;
  if (q >= 100) return max_;
  uint64_t rank = static_cast<uint64_t>(std::ceil(q / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = first_index(); i < counts_.size(); ++i) {  // nothing below min()
    seen += counts_[i];
    if (seen >= rank) {
      int64_t lo = lowest_at(i), hi = highest_at(i);
      return std::clamp(lo + (hi - lo) / 2, min_, max_);
    }
  }
  return max_;
}

double LatencyHistogram::max_relative_error() const {
  // The widest bucket relative to its lowest value is 1 / half_count wide;
  // the midpoint is at most half of that away.
  return 0.5 / static_cast<double>(sub_bucket_half_count_);
}

LatencyHistogram::State LatencyHistogram::state() const {
  State s;
  s.highest = highest_;
  s.significant_figures = sig_figs_;
  s.count = count_;
  s.saturated = saturated_;
  s.min = min_;
  s.max = max_;
  s.sum = sum_;
  s.sum_sq = sum_sq_;
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i]) s.buckets.emplace_back(static_cast<uint32_t>(i), counts_[i]);
  }
  return s;
}

Result<LatencyHistogram> LatencyHistogram::from_state(const State& s) {
  if (s.highest < 2 || s.significant_figures < 1 || s.significant_figures > 5) {
    return Error{"histogram shape out of range"};
  }
  LatencyHistogram h(s.highest, s.significant_figures);
  uint64_t total = 0;
  int64_t previous = -1;
  for (const auto& [slot, samples] : s.buckets) {
    if (slot >= h.counts_.size() || static_cast<int64_t>(slot) <= previous || samples == 0 ||
        samples > s.count - total) {
      return Error{"histogram bucket " + std::to_string(slot) + " out of range, out of order or over the count"};
    }
    previous = slot;
    h.counts_[slot] = samples;
    total += samples;
  }
  if (total != s.count || s.saturated > s.count || s.min < 0 || s.min > s.max || (s.count == 0 && (s.max || s.sum))) {
    return Error{"histogram counts or extremes do not add up"};
  }
  // Loops over the buckets run from min's bucket to max's: every sample must lie between them.
  if (s.count && (s.buckets.front().first != h.index_of(std::min(s.min, h.highest_)) ||
                  s.buckets.back().first != h.index_of(std::min(s.max, h.highest_)))) {
    return Error{"histogram min/max do not match its buckets"};
  }
  // The sums must be what `count` values between min and max can give (the squares' sum at least
  // sum^2 / count), and small enough that
  // stddev()'s exact 128-bit arithmetic cannot overflow (it holds max^2 * count twice over).
  const long double n = static_cast<long double>(s.count), lo = static_cast<long double>(s.min),
                    hi = static_cast<long double>(s.max), sum = static_cast<long double>(s.sum),
                    sum_sq = static_cast<long double>(s.sum_sq);
  const long double below = 1 - 1e-12L, above = 1 + 1e-12L;  // rounding of the long double products
  if (s.count && (sum < lo * n * below || sum > hi * n * above || sum_sq < lo * lo * n * below ||
                  sum_sq > hi * hi * n * above || sum_sq * n < sum * sum * below || hi * hi * n > 0x1p124L)) {
    return Error{"histogram sums do not fit its count, min and max"};
  }
  h.count_ = s.count;
  h.saturated_ = s.saturated;
  h.min_ = s.min;
  h.max_ = s.max;
  h.sum_ = s.sum;
  h.sum_sq_ = s.sum_sq;
  return h;
}

}  // namespace runara

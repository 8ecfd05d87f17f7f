// Progress lines where no terminal redraws them (a CI log, `nohup`, run.log): a plain line at
// most every few seconds instead of one per update.
//
// Contract. Not thread-safe: one owner thread (the run's, or the CLI's event callbacks). The
// first line is always due, so a short wait still shows once.
#pragma once

#include <limits>

namespace runara {

class ProgressThrottle {
 public:
  explicit ProgressThrottle(double interval_s = 5) : interval_s_(interval_s) {}
  // True when a line may be written at `now_s` (monotonic seconds), and then counts it written.
  bool due(double now_s) {
    if (now_s - last_s_ < interval_s_) return false;
    last_s_ = now_s;
    return true;
  }

 private:
  double interval_s_;
  double last_s_ = -std::numeric_limits<double>::infinity();
};

}  // namespace runara

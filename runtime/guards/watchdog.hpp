// The run's hard deadline, kept by a thread of its own: a script stuck in a busy loop never
// returns to the event loop, so only another thread can notice the deadline and stop it.
// The same thread is the backstop when stopping does not work: if the script has not unwound
// a grace period after it was told to stop (stuck inside one long C call), it says so.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

#include "base/clock.hpp"

namespace runara {

class Watchdog {
 public:
  // Both callbacks run on the watchdog's thread. `stop_pending` tells whether a stop was
  // requested and the script has not unwound yet; `on_stuck` runs once if that lasts longer
  // than `grace_s`.
  Watchdog(std::function<void()> on_expire, std::function<bool()> stop_pending, std::function<void()> on_stuck,
           double grace_s);
  ~Watchdog();

  void arm(double deadline);  // absolute monotonic_seconds(); may only move earlier once armed
  double deadline() const;    // 0 when not armed
  void disarm();
  void poke();                // re-check now; async-signal-safe

 private:
  void loop();

  std::function<void()> on_expire_;
  std::function<bool()> stop_pending_;
  std::function<void()> on_stuck_;
  double grace_s_;
  mutable std::mutex mutex_;
  double deadline_ = 0;
  std::atomic<bool> quit_{false};
  int pipe_[2] = {-1, -1};  // poke() writes a byte: the one wake-up a signal handler may do
  std::thread thread_;
};

}  // namespace runara

// The run's hard deadline, kept by a thread of its own: a script stuck in a busy loop never
// returns to the event loop, so only another thread can notice the deadline and stop it.
// The same thread is the backstop when stopping does not work: if the script has not unwound
// a grace period after it was told to stop (stuck inside one long C call), it says so.
// It also keeps the deadline of the run's ending (the runara.at_exit functions' budget), which
// comes after the run's own deadline may have fired and so cannot be one more arm().
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

#include "base/clock.hpp"

namespace runara {

class Watchdog {
 public:
  // The callbacks run on the watchdog's thread. `stop_pending` tells whether a stop was
  // requested and the script has not unwound yet; `on_stuck` runs once if that lasts longer
  // than `grace_s` (counted from when it became true).
  Watchdog(std::function<void()> on_expire, std::function<bool()> stop_pending, std::function<void()> on_stuck,
           double grace_s);
  ~Watchdog();

  // Starts the thread. Separate from the constructor because the callbacks read their owner's
  // state: a watchdog that is a member starts once the whole owner is constructed, not while
  // the members declared after it are still uninitialized memory.
  void start();

  void arm(double deadline);  // absolute monotonic_seconds(); may only move earlier once armed
  double deadline() const;    // 0 when not armed
  void disarm();
  void poke();                // re-check now; async-signal-safe

  // A second deadline, independent of the run's: it may be later than the run's deadline (or
  // come after that one fired), and `on_expire` runs once, on the watchdog's thread, when it
  // passes. disarm_ending() returns only once `on_expire` is not running and will not run, so
  // what it touches (the Lua state) may be destroyed after it.
  void arm_ending(double deadline, std::function<void()> on_expire);
  void disarm_ending();

 private:
  void loop();

  std::function<void()> on_expire_;
  std::function<bool()> stop_pending_;
  std::function<void()> on_stuck_;
  double grace_s_;
  mutable std::mutex mutex_;
  double deadline_ = 0;
  double ending_deadline_ = 0;             // 0: none armed, or it fired
  std::function<void()> on_ending_expire_;  // called with mutex_ held (see disarm_ending)
  std::atomic<bool> quit_{false};
  int pipe_[2] = {-1, -1};  // poke() writes a byte: the one wake-up a signal handler may do
  std::thread thread_;
};

}  // namespace runara

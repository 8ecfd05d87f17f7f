// The run's hard deadline, kept by a thread of its own: a script stuck in a busy loop never
// returns to the event loop, so only another thread can notice the deadline and stop it.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace runara {

double monotonic_seconds();

class Watchdog {
 public:
  // `on_expire` runs on the watchdog's thread: it must only do thread-safe things.
  explicit Watchdog(std::function<void()> on_expire);
  ~Watchdog();

  void arm(double deadline);    // absolute monotonic_seconds(); may only move earlier once armed
  double deadline() const;      // 0 when not armed
  void disarm();

 private:
  void loop();

  std::function<void()> on_expire_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  double deadline_ = 0;
  bool quit_ = false;
  bool fired_ = false;
  std::thread thread_;
};

}  // namespace runara

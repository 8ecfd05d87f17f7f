#include "watchdog.hpp"

#include <chrono>

namespace runara {

double monotonic_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

Watchdog::Watchdog(std::function<void()> on_expire)
    : on_expire_(std::move(on_expire)), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void Watchdog::arm(double deadline) {
  {
    std::lock_guard lock(mutex_);
    if (deadline_ != 0 && deadline >= deadline_) return;  // limits only tighten
    deadline_ = deadline;
  }
  changed_.notify_all();
}

void Watchdog::disarm() {
  {
    std::lock_guard lock(mutex_);
    deadline_ = 0;
  }
  changed_.notify_all();
}

double Watchdog::deadline() const {
  std::lock_guard lock(mutex_);
  return deadline_;
}

void Watchdog::loop() {
  std::unique_lock lock(mutex_);
  while (!quit_) {
    if (deadline_ == 0 || fired_) {
      changed_.wait(lock);
      continue;
    }
    const double left = deadline_ - monotonic_seconds();
    if (left > 0) {
      changed_.wait_for(lock, std::chrono::duration<double>(left));
      continue;
    }
    fired_ = true;
    lock.unlock();
    on_expire_();
    lock.lock();
  }
}

}  // namespace runara

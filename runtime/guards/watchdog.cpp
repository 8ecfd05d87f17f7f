#include "guards/watchdog.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

namespace runara {

Watchdog::Watchdog(std::function<void()> on_expire, std::function<bool()> stop_pending,
                   std::function<void()> on_stuck, double grace_s)
    : on_expire_(std::move(on_expire)),
      stop_pending_(std::move(stop_pending)),
      on_stuck_(std::move(on_stuck)),
      grace_s_(grace_s) {
  if (pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) pipe_[0] = pipe_[1] = -1;
}

void Watchdog::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  quit_ = true;
  poke();
  if (thread_.joinable()) thread_.join();
  for (int fd : pipe_) {
    if (fd >= 0) close(fd);
  }
}

void Watchdog::poke() {
  const char byte = 1;
  const ssize_t ignored = write(pipe_[1], &byte, 1);
  (void)ignored;
}

void Watchdog::arm(double deadline) {
  {
    std::lock_guard lock(mutex_);
    if (deadline_ != 0 && deadline >= deadline_) return;  // limits only tighten
    deadline_ = deadline;
  }
  poke();
}

void Watchdog::disarm() {
  {
    std::lock_guard lock(mutex_);
    deadline_ = 0;
  }
  poke();
}

void Watchdog::arm_ending(double deadline, std::function<void()> on_expire) {
  {
    std::lock_guard lock(mutex_);
    ending_deadline_ = deadline;
    on_ending_expire_ = std::move(on_expire);
  }
  poke();
}

void Watchdog::disarm_ending() {
  std::lock_guard lock(mutex_);  // waits for a call of on_ending_expire_ in progress
  ending_deadline_ = 0;
  on_ending_expire_ = nullptr;
}

double Watchdog::deadline() const {
  std::lock_guard lock(mutex_);
  return deadline_;
}

void Watchdog::loop() {
  bool fired = false, stuck_reported = false;
  double stuck_at = 0;
  while (!quit_) {
    const double now = monotonic_seconds();
    double next = 0;  // 0: nothing to wait for but a poke
    const double deadline = this->deadline();
    if (deadline != 0 && !fired) {
      if (now >= deadline) {
        fired = true;
        on_expire_();
        continue;
      }
      next = deadline;
    }
    {
      // Called with the lock held, so that disarm_ending() cannot return while it runs: the
      // callback touches the Lua state, which the runtime closes right after disarming.
      std::lock_guard lock(mutex_);
      if (ending_deadline_ != 0) {
        if (now >= ending_deadline_) {
          ending_deadline_ = 0;
          if (on_ending_expire_) on_ending_expire_();
          continue;
        }
        next = next == 0 ? ending_deadline_ : std::min(next, ending_deadline_);
      }
    }
    const bool pending = stop_pending_ && stop_pending_();
    if (!pending) stuck_at = 0;  // the grace runs from when the stop was requested, not from an earlier one
    if (pending && !stuck_reported) {
      if (stuck_at == 0) stuck_at = now + grace_s_;
      if (now >= stuck_at) {
        stuck_reported = true;
        if (on_stuck_) on_stuck_();
        continue;
      }
      next = next == 0 ? stuck_at : std::min(next, stuck_at);
    }
    pollfd p{pipe_[0], POLLIN, 0};
    const int timeout_ms = next == 0 ? -1 : static_cast<int>(std::ceil((next - now) * 1000));
    if (poll(&p, 1, timeout_ms) > 0) {
      char buf[64];
      while (read(pipe_[0], buf, sizeof buf) > 0) {
      }
    }
  }
}

}  // namespace runara

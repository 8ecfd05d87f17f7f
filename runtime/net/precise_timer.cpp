#include "net/precise_timer.hpp"

#include <sys/timerfd.h>
#include <unistd.h>
#include <uv.h>

namespace runara {

struct PreciseTimer::State {
  union {
    uv_poll_t poll;    // fd >= 0: watching the timerfd
    uv_timer_t timer;  // fd < 0: the millisecond fallback
  } handle{};
  int fd = -1;
  std::uint64_t due_ns = 0;  // the fallback's deadline
  Callback callback = nullptr;
  void* data = nullptr;

  uv_handle_t* as_handle() { return reinterpret_cast<uv_handle_t*>(&handle); }
};

namespace {

using State = PreciseTimer::State;

void on_ready(uv_poll_t* handle, int, int) {
  auto* s = static_cast<State*>(handle->data);
  std::uint64_t expirations = 0;
  if (read(s->fd, &expirations, sizeof expirations) <= 0) return;  // disarmed meanwhile
  s->callback(s->data);
}

void arm_fallback(State* s);

void on_fallback(uv_timer_t* handle) {
  auto* s = static_cast<State*>(handle->data);
  if (uv_hrtime() < s->due_ns) return arm_fallback(s);  // never early, whatever the loop's clock said
  s->callback(s->data);
}

// uv_timer_start counts from the loop's cached time (uv_now), which lags the real clock by however
// long the loop has been busy since it last looked: a wait computed from uv_hrtime() would fire
// early by that lag. So: the ceiling millisecond of the deadline, less the loop's own "now".
void arm_fallback(State* s) {
  uv_timer_t* timer = &s->handle.timer;
  const std::uint64_t due_ms = (s->due_ns + 999'999) / 1'000'000;
  const std::uint64_t loop_ms = uv_now(timer->loop);
  uv_timer_start(timer, on_fallback, due_ms > loop_ms ? due_ms - loop_ms : 0, 0);
}

void set(int fd, std::uint64_t due_ns) {
  itimerspec when{};
  when.it_value.tv_sec = static_cast<time_t>(due_ns / 1'000'000'000);
  when.it_value.tv_nsec = static_cast<long>(due_ns % 1'000'000'000);
  if (due_ns == 0) when.it_value.tv_nsec = 1;  // zero would disarm it
  timerfd_settime(fd, TFD_TIMER_ABSTIME, &when, nullptr);
}

}  // namespace

PreciseTimer::PreciseTimer(uv_loop_t* loop, Callback callback, void* data) : state_(new State) {
  state_->callback = callback;
  state_->data = data;
  // CLOCK_MONOTONIC is uv_hrtime()'s clock.
  state_->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (state_->fd >= 0) {
    uv_poll_init(loop, &state_->handle.poll, state_->fd);
    uv_poll_start(&state_->handle.poll, UV_READABLE, on_ready);
  } else {
    uv_timer_init(loop, &state_->handle.timer);
  }
  state_->as_handle()->data = state_;  // `data` is at the same place in every uv handle
}

PreciseTimer::~PreciseTimer() { close(); }

void PreciseTimer::start_at(std::uint64_t due_ns) {
  if (!state_) return;
  if (state_->fd >= 0) return set(state_->fd, due_ns);
  state_->due_ns = due_ns;
  arm_fallback(state_);
}

void PreciseTimer::stop() {
  if (!state_) return;
  if (state_->fd < 0) {
    uv_timer_stop(&state_->handle.timer);
    return;
  }
  itimerspec off{};
  timerfd_settime(state_->fd, 0, &off, nullptr);
}

void PreciseTimer::close() {
  if (!state_) return;
  if (state_->fd >= 0) uv_poll_stop(&state_->handle.poll);
  uv_close(state_->as_handle(), [](uv_handle_t* h) {
    auto* s = static_cast<State*>(h->data);
    if (s->fd >= 0) ::close(s->fd);
    delete s;
  });
  state_ = nullptr;
}

}  // namespace runara

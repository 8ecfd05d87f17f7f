#include "net/precise_timer.hpp"

#include <sys/timerfd.h>
#include <unistd.h>
#include <uv.h>

namespace runara {

struct PreciseTimer::State {
  uv_poll_t poll{};
  int fd = -1;
  Callback callback = nullptr;
  void* data = nullptr;
};

namespace {

void on_ready(uv_poll_t* handle, int, int) {
  auto* s = static_cast<PreciseTimer::State*>(handle->data);
  std::uint64_t expirations = 0;
  if (read(s->fd, &expirations, sizeof expirations) <= 0) return;  // disarmed meanwhile
  s->callback(s->data);
}

void set(int fd, std::uint64_t due_ns) {
  itimerspec when{};
  when.it_value.tv_sec = static_cast<time_t>(due_ns / 1'000'000'000);
  when.it_value.tv_nsec = static_cast<long>(due_ns % 1'000'000'000);
  if (due_ns == 0) when.it_value.tv_nsec = 1;  // zero would disarm it
  timerfd_settime(fd, TFD_TIMER_ABSTIME, &when, nullptr);
}

}  // namespace

PreciseTimer::PreciseTimer(uv_loop_t* loop, Callback callback, void* data) {
  // CLOCK_MONOTONIC is uv_hrtime()'s clock.
  const int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (fd < 0) return;
  state_ = new State;
  state_->fd = fd;
  state_->callback = callback;
  state_->data = data;
  state_->poll.data = state_;
  uv_poll_init(loop, &state_->poll, fd);
  uv_poll_start(&state_->poll, UV_READABLE, on_ready);
}

PreciseTimer::~PreciseTimer() { close(); }

void PreciseTimer::start_at(std::uint64_t due_ns) {
  if (state_) set(state_->fd, due_ns);
}

void PreciseTimer::stop() {
  if (!state_) return;
  itimerspec off{};
  timerfd_settime(state_->fd, 0, &off, nullptr);
}

void PreciseTimer::close() {
  if (!state_) return;
  uv_poll_stop(&state_->poll);
  uv_close(reinterpret_cast<uv_handle_t*>(&state_->poll), [](uv_handle_t* h) {
    auto* s = static_cast<State*>(h->data);
    ::close(s->fd);
    delete s;
  });
  state_ = nullptr;
}

}  // namespace runara

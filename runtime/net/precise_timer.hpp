// A one-shot timer on a libuv loop with nanosecond deadlines (a timerfd watched by uv_poll).
//
// uv_timer_t counts whole milliseconds: a send due at 10.2 ms fires at 11 ms or later. For an
// open-loop load that lateness would be added to every request's latency (which counts from the
// intended send time), so its send times use this instead. Should the system refuse a timerfd
// (no file descriptors left), it falls back to a uv timer armed for the ceiling millisecond:
// late, never early.
#pragma once

#include <cstdint>

typedef struct uv_loop_s uv_loop_t;

namespace runara {

class PreciseTimer {
 public:
  using Callback = void (*)(void* data);
  PreciseTimer(uv_loop_t* loop, Callback callback, void* data);
  ~PreciseTimer();  // close()s if still open
  PreciseTimer(const PreciseTimer&) = delete;
  PreciseTimer& operator=(const PreciseTimer&) = delete;

  // Fires once at due_ns, on uv_hrtime()'s clock (at once when that is past). Replaces any
  // earlier deadline.
  void start_at(std::uint64_t due_ns);
  void stop();
  // Releases the fd and the handle (the handle is freed by the loop, later).
  void close();

  struct State;

 private:
  State* state_ = nullptr;
};

}  // namespace runara

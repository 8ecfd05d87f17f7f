// PreciseTimer: fires once at its deadline (never before it), at once when the deadline is past,
// not at all once stopped, and a new deadline replaces the old one.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <uv.h>

#include <memory>
#include <vector>

#include "net/precise_timer.hpp"

using runara::PreciseTimer;

namespace {

struct Fired {
  std::vector<std::uint64_t> at;  // uv_hrtime() of each call
  static void note(void* self) { static_cast<Fired*>(self)->at.push_back(uv_hrtime()); }
};

// Runs the loop until nothing is left in it, or for at most `ms` milliseconds.
void run_for(uv_loop_t* loop, std::uint64_t ms) {
  uv_timer_t guard;
  uv_timer_init(loop, &guard);
  uv_timer_start(&guard, [](uv_timer_t* t) { uv_stop(t->loop); }, ms, 0);
  uv_run(loop, UV_RUN_DEFAULT);
  uv_close(reinterpret_cast<uv_handle_t*>(&guard), nullptr);
  uv_run(loop, UV_RUN_NOWAIT);
}

}  // namespace

TEST_CASE("PreciseTimer fires once, not before its deadline, and can be moved or stopped", "[precise_timer]") {
  uv_loop_t loop;
  uv_loop_init(&loop);
  Fired fired;
  {
    PreciseTimer timer(&loop, &Fired::note, &fired);
    SECTION("a deadline 3.5 ms ahead: one call, at or after it") {
      const std::uint64_t due = uv_hrtime() + 3'500'000;
      timer.start_at(due);
      run_for(&loop, 100);
      REQUIRE(fired.at.size() == 1);
      CHECK(fired.at[0] >= due);
    }
    SECTION("a deadline in the past fires on the next loop turn") {
      timer.start_at(uv_hrtime() - 1'000'000);
      run_for(&loop, 20);
      CHECK(fired.at.size() == 1);
    }
    SECTION("a later start_at replaces the deadline; stop cancels it") {
      const std::uint64_t due = uv_hrtime() + 30'000'000;
      timer.start_at(uv_hrtime() + 2'000'000);
      timer.start_at(due);
      run_for(&loop, 100);
      REQUIRE(fired.at.size() == 1);
      CHECK(fired.at[0] >= due);
      timer.start_at(uv_hrtime() + 5'000'000);
      timer.stop();
      run_for(&loop, 30);
      CHECK(fired.at.size() == 1);
    }
    timer.close();
  }
  uv_run(&loop, UV_RUN_DEFAULT);  // the closed handle is freed
  CHECK(uv_loop_close(&loop) == 0);
}

// With no file descriptor left for a timerfd the timer falls back to a libuv millisecond timer,
// which counts from the loop's cached clock: after the loop was busy for a while, that clock is
// behind, and a wait measured from the real clock would fire early by the difference.
TEST_CASE("PreciseTimer without a timerfd is never early, even when the loop's clock is stale", "[precise_timer]") {
  uv_loop_t loop;
  uv_loop_init(&loop);
  Fired fired;
  rlimit saved{};
  getrlimit(RLIMIT_NOFILE, &saved);
  rlimit low = saved;
  low.rlim_cur = 256;
  REQUIRE(setrlimit(RLIMIT_NOFILE, &low) == 0);
  std::vector<int> filler;
  for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) filler.push_back(fd);
  const int probe = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  CHECK(probe < 0);  // so the timer below cannot have one either
  auto timer = std::make_unique<PreciseTimer>(&loop, &Fired::note, &fired);
  for (int fd : filler) close(fd);
  setrlimit(RLIMIT_NOFILE, &saved);

  uv_run(&loop, UV_RUN_NOWAIT);  // the loop's clock is now current...
  const std::uint64_t busy_until = uv_hrtime() + 40'000'000;
  while (uv_hrtime() < busy_until) {
  }  // ...and 40 ms behind, as after a long callback
  const std::uint64_t due = uv_hrtime() + 10'000'000;
  timer->start_at(due);
  run_for(&loop, 200);
  REQUIRE(fired.at.size() == 1);
  CHECK(fired.at[0] >= due);
  timer->close();
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

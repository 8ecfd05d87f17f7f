// Work for libuv's thread pool, off the run's loop: `work` runs on a pool thread, then `after` on
// the loop's thread. What both share must outlive them (capture shared pointers, not `this`).
#pragma once

#include <uv.h>

#include <functional>
#include <utility>

namespace runara {

inline void off_loop(uv_loop_t* loop, std::function<void()> work, std::function<void()> after) {
  struct Job {
    uv_work_t req{};
    std::function<void()> work, after;
  };
  auto* job = new Job{{}, std::move(work), std::move(after)};
  job->req.data = job;
  uv_queue_work(
      loop, &job->req, [](uv_work_t* r) { static_cast<Job*>(r->data)->work(); },
      [](uv_work_t* r, int) {
        auto* j = static_cast<Job*>(r->data);
        j->after();
        delete j;
      });
}

}  // namespace runara

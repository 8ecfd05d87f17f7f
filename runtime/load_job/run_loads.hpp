// What a run's http_load calls share: their numbers (a load without a name is
// "http_load-<number>"), the folders they wrote (a second load of the same name, as two tasks
// running the same suite, would overwrite the first one's results) and the cap on the worker
// threads of the loads running at once.
//
// Contract: the run's loop thread only (where Lua runs); one per run (the http_load primitive's).
#pragma once

#include <memory>
#include <set>
#include <string>

#include "base/result.hpp"
#include "load_job/job.hpp"

namespace runara {

constexpr int kMaxRunThreads = 256;  // worker threads of all loads running at once

class RunLoads {
 public:
  int next_number() { return ++loads_; }
  // Admits `plan`: its folders are this run's from now on (even when its threads are refused),
  // and its threads are counted until the job ends (plan.on_end gives them back).
  Status admit(LoadPlan& plan);

 private:
  int loads_ = 0;
  std::set<std::string> names_;
  std::shared_ptr<int> threads_ = std::make_shared<int>(0);  // of the loads running now
};

}  // namespace runara

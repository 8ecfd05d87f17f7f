#include "load_job/run_loads.hpp"

#include <algorithm>

#include "load_job/plan.hpp"

namespace runara {

Status RunLoads::admit(LoadPlan& plan) {
  const std::vector<std::string> folders = load_folders(plan);
  for (const auto& folder : folders) {
    if (names_.count(folder)) {
      return Error{"option 'name': a load named \"" + folder +
                   "\" already ran in this run and its folder holds its results; give each load its own name"};
    }
  }
  names_.insert(folders.begin(), folders.end());
  int threads = 0;
  for (const auto& p : plan.points) threads = std::max(threads, p.threads);
  if (*threads_ + threads > kMaxRunThreads) {
    return Error{std::to_string(threads) + " worker threads would exceed the run's cap of " + std::to_string(kMaxRunThreads) +
                 " (loads running now hold " + std::to_string(*threads_) + "); lower 'threads'"};
  }
  *threads_ += threads;
  plan.on_end = [count = threads_, threads] { *count -= threads; };
  return {};
}

}  // namespace runara

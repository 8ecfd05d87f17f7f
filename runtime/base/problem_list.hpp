// A sampler's problems as its results show them: the first 99 as they came, then one last entry
// that counts the rest and quotes the latest. A flaky tool or server reports a problem every few
// intervals for as long as it runs; kept whole, the list grew with time outside --max-memory.
// Every problem still reaches run.log as it happens (the samplers' on_problem).
//
// Contract: plain data, single-threaded, no I/O.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace runara {

class ProblemList {
 public:
  static constexpr std::size_t kMax = 100;

  void add(std::string problem) {
    if (kept_.size() < kMax - 1) {
      kept_.push_back(std::move(problem));
      return;
    }
    ++over_;
    std::string last = std::to_string(over_) + " more problem" + (over_ == 1 ? "" : "s") +
                       " not kept here (run.log has them all); the latest: " + problem;
    if (kept_.size() < kMax) kept_.push_back(std::move(last));
    else kept_.back() = std::move(last);
  }
  const std::vector<std::string>& kept() const { return kept_; }

 private:
  std::vector<std::string> kept_;
  std::size_t over_ = 0;  // problems after the first kMax - 1
};

}  // namespace runara

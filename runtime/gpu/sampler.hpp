// The sampling engine behind gpu_metrics.start: readings of every GPU at an interval for as long
// as a load runs, each stamped when it arrived (amd-smi stamps whole seconds and buffers, so the
// tool's own clock is not trusted), with phase marks. nvidia-smi streams from one long-lived
// process (`-lms`); amd-smi and rocm-smi cannot stream parseable output, so their read command
// runs once per interval (one at a time: a tick that finds the last read still running is
// skipped and counted).
//
// What goes wrong is reported, never waited on: a tool that exits mid-run (stream) or fails
// three reads in a row (polled) stops the sampler; a tool silent for `stall_s` is killed and
// stops it; unreadable output is counted and skipped (twenty unreadable lines in a row stop a
// stream). Each problem reaches `on_problem` once and stays in problems().
//
// Contract. Threading: the loop thread only; no Lua. The target is held weakly: a target closed
// under the sampler stops it with a problem. stop() kills the tool at once and keeps what was
// read; the destructor stops too. Callbacks never come after stop() or destruction.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <runara/command_target.hpp>

#include "base/problem_list.hpp"
#include "base/result.hpp"

#include "gpu/backend.hpp"
#include "gpu/summary.hpp"
#include "gpu/one_shot.hpp"

namespace runara::gpu {

class GpuSampler {
 public:
  struct Options {
    Backend backend = Backend::nvidia_smi;
    double interval_s = 1.0;
    double stall_s = 0;  // 0: max(10 s, 5 intervals)
    // Asked before each sample is kept (its bytes): ok to go on, else why not (the run's
    // --max-memory): the sampler then stops with that problem. Unset: no limit.
    std::function<Status(std::size_t bytes)> reserve;
  };
  using OnProblem = std::function<void(const std::string& problem)>;

  GpuSampler(uv_loop_t* loop, std::weak_ptr<CommandTarget> target, Options options, OnProblem on_problem);
  ~GpuSampler();
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  void start();
  // A mark at now_s(), its memory asked of Options::reserve (refused: not kept).
  Status mark(std::string label);
  void stop();
  bool running() const { return running_; }
  double now_s() const;  // seconds since start()

  const std::vector<Sample>& samples() const { return samples_; }
  const std::vector<Mark>& marks() const { return marks_; }
  const std::vector<std::string>& problems() const { return problems_.kept(); }  // ProblemList: at most 100
  int skipped_ticks() const { return skipped_; }
  int unreadable() const { return unreadable_; }
  double end_s() const { return end_s_; }  // when stop() ran (now_s() while running)
  std::size_t reserved_bytes() const { return reserved_; }  // the total Options::reserve granted
  // What a sample or a mark costs in memory, counted with its overhead: its slot in the vector
  // (twice over: the vector's spare room), the heap block of its readings or label with the
  // allocator's own overhead. A flood of one-GPU samples or short marks is not nearly free.
  static std::size_t sample_cost(const std::vector<GpuReading>& gpus);
  static std::size_t mark_cost(const std::string& label);

 private:
  void start_stream(CommandTarget& target, const std::string& command);
  void on_stream_line(std::string_view line);
  void flush_group();
  void keep(uint64_t arrived_ns, std::vector<GpuReading> gpus);
  void poll();
  void on_poll(Collected c);
  void on_tick();
  void report(std::string problem, bool fatal);  // fatal: stops sampling
  double at(uint64_t hrtime_ns) const;
  std::string what() const;

  uv_loop_t* loop_;
  std::weak_ptr<CommandTarget> target_;
  Options opt_;
  OnProblem on_problem_;
  uv_timer_t* timer_;  // heap-held: closes after we are gone
  bool running_ = false;
  uint64_t start_ns_ = 0, last_output_ns_ = 0, poll_started_ns_ = 0;
  double end_s_ = 0;
  std::unique_ptr<CommandTarget::Running> stream_;
  std::unique_ptr<OneShot> poll_;
  std::vector<GpuReading> group_;  // stream lines of the tick being gathered
  uint64_t group_ns_ = 0;
  std::size_t gpus_per_tick_ = 0;   // learnt from the first complete tick
  std::size_t reserved_ = 0;
  int bad_in_row_ = 0, failed_polls_in_row_ = 0, skipped_ = 0, unreadable_ = 0;
  std::vector<Sample> samples_;
  std::vector<Mark> marks_;
  ProblemList problems_;
};

}  // namespace runara::gpu

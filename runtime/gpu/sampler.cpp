#include "gpu/sampler.hpp"

#include <algorithm>
#include <cstdio>

#include <uv.h>

#include "gpu/nvidia_smi_parser.hpp"

namespace runara::gpu {

namespace {

constexpr int kMaxFailedPolls = 3;
constexpr int kMaxBadLines = 20;

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

}  // namespace

GpuSampler::GpuSampler(uv_loop_t* loop, std::weak_ptr<CommandTarget> target, Options options, OnProblem on_problem)
    : loop_(loop), target_(std::move(target)), opt_(std::move(options)), on_problem_(std::move(on_problem)),
      timer_(new uv_timer_t) {
  if (opt_.stall_s <= 0) opt_.stall_s = std::max(10.0, 5 * opt_.interval_s);
  uv_timer_init(loop_, timer_);
  timer_->data = this;
}

GpuSampler::~GpuSampler() {
  on_problem_ = nullptr;
  stop();
  uv_close(reinterpret_cast<uv_handle_t*>(timer_), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

double GpuSampler::at(uint64_t ns) const { return static_cast<double>(ns - start_ns_) / 1e9; }
double GpuSampler::now_s() const { return running_ ? at(uv_hrtime()) : end_s_; }

std::string GpuSampler::what() const {
  auto t = target_.lock();
  return std::string(backend_name(opt_.backend)) + " on " + (t ? t->name() : std::string("a closed target"));
}

void GpuSampler::start() {
  start_ns_ = last_output_ns_ = uv_hrtime();
  running_ = true;
  auto target = target_.lock();
  if (!target) return report("gpu_metrics: the target was closed before sampling started", true);
  const auto interval_ms = static_cast<uint64_t>(std::max(1.0, opt_.interval_s * 1000));
  const std::string stream = stream_command(opt_.backend, static_cast<int>(interval_ms));
  // The tick checks a stream for silence, or starts the next poll.
  uv_timer_start(timer_, [](uv_timer_t* t) { static_cast<GpuSampler*>(t->data)->on_tick(); },
                 stream.empty() ? 0 : interval_ms, interval_ms);
  if (!stream.empty()) start_stream(*target, stream);
}

void GpuSampler::start_stream(CommandTarget& target, const std::string& command) {
  CommandTarget::Handlers h;
  h.on_line = [this](std::string_view line) { on_stream_line(line); };
  h.on_exit = [this](const CommandTarget::Exit& exit) {
    std::string why = !exit.error.empty() ? exit.error : "exited with code " + std::to_string(exit.code);
    std::string tail = exit.stderr_tail.substr(exit.stderr_tail.size() > 300 ? exit.stderr_tail.size() - 300 : 0);
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
    if (samples_.empty() && group_.empty() && !exit.error.empty()) return report(what() + ": " + exit.error, true);
    report(what() + ": the tool stopped mid-run (" + why + (tail.empty() ? "" : "; stderr: " + tail) + ")", true);
  };
  stream_ = target.run(command, std::move(h));
}

void GpuSampler::on_stream_line(std::string_view line) {
  if (!running_) return;
  const uint64_t now = uv_hrtime();
  last_output_ns_ = now;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  GpuReading r;
  std::string error = parse_nvidia_smi_line(line, nvidia_sample_fields(), static_cast<int>(group_.size()), r);
  if (!error.empty()) {
    ++unreadable_;
    if (unreadable_ == 1) report(what() + ": unreadable output skipped: " + error, false);
    if (++bad_in_row_ >= kMaxBadLines)
      report(what() + ": " + std::to_string(kMaxBadLines) + " unreadable lines in a row; stopped sampling", true);
    return;
  }
  bad_in_row_ = 0;
  // A GPU seen twice opens the next tick; once the tick's size is known, a full tick closes.
  // A tick holds at most kMaxGpus readings, so this look-up costs at most 64 comparisons a line.
  const bool repeat = std::any_of(group_.begin(), group_.end(), [&](const GpuReading& g) { return g.index == r.index; });
  if (repeat) {
    if (!gpus_per_tick_) gpus_per_tick_ = group_.size();
    flush_group();
  } else if (group_.size() >= kMaxGpus) {
    group_.clear();
    return report(too_many_gpus(what()) + " (distinct GPU indices without a repeat); stopped sampling", true);
  }
  if (group_.empty()) group_ns_ = now;
  group_.push_back(r);
  if (gpus_per_tick_ && group_.size() >= gpus_per_tick_) flush_group();
}

void GpuSampler::flush_group() {
  if (group_.empty()) return;
  std::vector<GpuReading> gpus;
  gpus.swap(group_);
  keep(group_ns_, std::move(gpus));
}

namespace {
constexpr std::size_t kMallocOverhead = 16;  // glibc: an 8-byte header, blocks rounded to 16
}  // namespace

std::size_t GpuSampler::sample_cost(const std::vector<GpuReading>& gpus) {
  return 2 * sizeof(Sample) + (gpus.capacity() ? gpus.capacity() * sizeof(GpuReading) + kMallocOverhead : 0);
}

std::size_t GpuSampler::mark_cost(const std::string& label) {
  static const std::size_t kInline = std::string().capacity();
  return 2 * sizeof(Mark) + (label.capacity() > kInline ? label.capacity() + 1 + kMallocOverhead : 0);
}

void GpuSampler::keep(uint64_t arrived_ns, std::vector<GpuReading> gpus) {
  const std::size_t bytes = sample_cost(gpus);
  if (opt_.reserve) {
    if (Status held = opt_.reserve(bytes); !held) return report("gpu_metrics: " + held.error() + "; stopped sampling", true);
    reserved_ += bytes;
  }
  samples_.push_back(Sample{at(arrived_ns), std::move(gpus)});
}

void GpuSampler::on_tick() {
  if (!running_) return;
  const uint64_t now = uv_hrtime();
  if (stream_) {
    if (static_cast<double>(now - last_output_ns_) / 1e9 > opt_.stall_s)
      report(what() + ": no output for " + seconds(opt_.stall_s) + " s (the tool hangs); killed it, stopped sampling", true);
    return;
  }
  if (poll_) {
    ++skipped_;  // the last read is still running; OneShot's own timeout ends a hung one
    return;
  }
  poll();
}

void GpuSampler::poll() {
  auto target = target_.lock();
  if (!target) return report("gpu_metrics: the target was closed; stopped sampling", true);
  poll_ = std::make_unique<OneShot>(loop_, static_cast<uint64_t>(opt_.stall_s * 1000));
  poll_started_ns_ = uv_hrtime();
  poll_->start(*target, read_command(opt_.backend), what(), [this](Collected c) { on_poll(std::move(c)); });
}

void GpuSampler::on_poll(Collected c) {
  std::unique_ptr<OneShot> done = std::move(poll_);  // destroyed when this returns
  if (!running_) return;
  if (!c.error.empty()) {
    // A hung read was killed by its timeout: the tool is stuck, not flaky.
    const bool hung = c.timed_out;
    if (hung) return report(c.error + "; stopped sampling", true);
    if (++failed_polls_in_row_ < kMaxFailedPolls) return report(c.error, false);
    return report(c.error + "; " + std::to_string(kMaxFailedPolls) + " failed reads in a row, stopped sampling", true);
  }
  failed_polls_in_row_ = 0;
  ParsedReadings p = parse_read(opt_.backend, c.text);
  if (!p.error.empty()) {
    if (++unreadable_ == 1) report(what() + ": unreadable output skipped: " + p.error, false);
    return;
  }
  keep(c.last_line_ns ? c.last_line_ns : uv_hrtime(), std::move(p.gpus));
}

Status GpuSampler::mark(std::string label) {
  if (opt_.reserve) {
    const std::size_t bytes = mark_cost(label);
    if (Status held = opt_.reserve(bytes); !held) return held;
    reserved_ += bytes;
  }
  marks_.push_back(Mark{now_s(), std::move(label)});
  return {};
}

void GpuSampler::report(std::string problem, bool fatal) {
  problems_.add(problem);
  if (on_problem_) on_problem_(problem);
  if (fatal) stop();
}

void GpuSampler::stop() {
  if (!running_) return;
  end_s_ = at(uv_hrtime());
  running_ = false;
  uv_timer_stop(timer_);
  // A tick cut short by the stop is not a reading of every GPU: drop it.
  if (!gpus_per_tick_ || group_.size() >= gpus_per_tick_) flush_group();
  group_.clear();
  stream_.reset();
  poll_.reset();
}

}  // namespace runara::gpu

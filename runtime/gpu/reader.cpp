#include "gpu/reader.hpp"

namespace runara::gpu {

void GpuReader::start(std::weak_ptr<CommandTarget> target, std::optional<Backend> wanted, bool read_gpus, Done done) {
  target_ = std::move(target);
  read_gpus_ = read_gpus;
  done_ = std::move(done);
  auto hit = cache_.find(target_);
  if (hit != cache_.end() && (!wanted || hit->second.backend == *wanted)) {
    snap_.backend = hit->second.backend;
    snap_.facts = hit->second.facts;
    if (read_gpus_) return read_now();
    return later_.after(0, [this] { finish(""); });  // from the loop, never inside start()
  }
  if (wanted) candidates_ = {*wanted};
  else candidates_.assign(std::begin(kAutoDetectOrder), std::end(kAutoDetectOrder));
  try_static(0);
}

void GpuReader::try_static(std::size_t next) {
  auto target = target_.lock();
  if (!target) return finish("gpu_metrics: the target was closed");
  if (next >= candidates_.size()) {
    const std::string intro = candidates_.size() == 1 ? "gpu_metrics: " : "gpu_metrics: no GPU tool answered on " + target->name() + ": ";
    return finish(intro + failures_);
  }
  const Backend b = candidates_[next];
  step_ = std::make_unique<OneShot>(loop_, timeout_ms_);
  step_->start(*target, static_command(b), std::string(backend_name(b)) + " on " + target->name(),
               [this, b, next](Collected c) {
                 std::string error = c.error;
                 ParsedStatic facts;
                 if (error.empty()) {
                   facts = parse_static(b, c.text);
                   error = facts.error;
                 }
                 if (!error.empty()) {
                   failures_ += (failures_.empty() ? "" : "; ") + error;
                   return try_static(next + 1);
                 }
                 snap_.backend = b;
                 snap_.facts = facts.facts;
                 cache_[target_] = Detected{b, facts.facts};
                 if (read_gpus_) return read_now();
                 finish("");
               });
}

void GpuReader::read_now() {
  auto target = target_.lock();
  if (!target) return finish("gpu_metrics: the target was closed");
  const Backend b = snap_.backend;
  step_ = std::make_unique<OneShot>(loop_, timeout_ms_);
  step_->start(*target, read_command(b), std::string(backend_name(b)) + " on " + target->name(), [this, b](Collected c) {
    if (!c.error.empty()) return finish(c.error);
    ParsedReadings p = parse_read(b, c.text);
    snap_.gpus = std::move(p.gpus);
    finish(p.error);
  });
}

void GpuReader::finish(std::string error) {
  if (!done_) return;
  auto done = std::move(done_);
  done_ = nullptr;
  if (!error.empty()) return done(Error{std::move(error)});  // may destroy this
  done(std::move(snap_));  // may destroy this
}

}  // namespace runara::gpu

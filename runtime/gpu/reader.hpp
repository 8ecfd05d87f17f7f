// One snapshot of a host's GPUs (gpu_metrics.read, and what gpu_metrics.start learns before it
// samples): which tool the host has, its static facts and one reading of every GPU.
//
// Backend auto-detection runs the tools' static commands in kAutoDetectOrder until one answers
// with GPUs; the answer (backend and facts) is cached per target in a DetectCache, so a target is
// probed once per run however many reads and samplers use it.
//
// Contract. Threading: the loop thread only; no Lua. The callback comes exactly once, from the
// loop, unless the GpuReader is destroyed first (which kills whatever command is running). The
// callback may destroy the reader. The target is held weakly between steps.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <runara/command_target.hpp>

#include "base/delayed_calls.hpp"
#include "base/result.hpp"
#include "gpu/backend.hpp"
#include "gpu/one_shot.hpp"

namespace runara::gpu {

struct Detected {
  Backend backend;
  GpuStatic facts;
};

// What each target turned out to have. Keyed by the target's identity (owner_before), so an
// entry never matches a new target that reuses a closed one's address.
using DetectCache = std::map<std::weak_ptr<CommandTarget>, Detected, std::owner_less<std::weak_ptr<CommandTarget>>>;

struct Snapshot {
  Backend backend = Backend::nvidia_smi;
  GpuStatic facts;
  std::vector<GpuReading> gpus;
};

class GpuReader {
 public:
  // The snapshot, or why there is none (every tool's reason, for detection).
  using Done = std::function<void(Result<Snapshot>)>;
  GpuReader(uv_loop_t* loop, DetectCache& cache, uint64_t timeout_ms = 30000)
      : loop_(loop), cache_(cache), timeout_ms_(timeout_ms), later_(loop) {}

  // `wanted`: a backend the script named, or nullopt for "auto". `read_gpus`: false to stop after
  // detection and static facts (what a sampler needs before it starts).
  void start(std::weak_ptr<CommandTarget> target, std::optional<Backend> wanted, bool read_gpus, Done done);

 private:
  void try_static(std::size_t next);
  void read_now();
  void finish(std::string error);

  uv_loop_t* loop_;
  DetectCache& cache_;
  uint64_t timeout_ms_;
  std::weak_ptr<CommandTarget> target_;
  std::vector<Backend> candidates_;
  std::string failures_;
  bool read_gpus_ = true;
  Snapshot snap_;
  std::unique_ptr<OneShot> step_;
  Done done_;
  DelayedCalls later_;
};

}  // namespace runara::gpu

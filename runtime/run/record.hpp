// The `run` section of results.json: what ran, with what, how it ended and what it cost.
//
// Contract. One RunRecorder per run, owned by Runtime::Impl and used only on the run's (Lua)
// thread. begin() stamps the start when the run starts; finish() stamps the end and builds the
// section once every ending has been decided (after teardown), so that a failed, stopped or
// watchdog-ended run leaves the same record as a successful one. Nothing here redacts or
// writes: the caller redacts the JSON (params and errors may carry secrets) and writes it.
// machine_source, when set by the primitive that creates machines, must stay callable until
// finish() returns (the primitive outlives the run's end).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runara/primitive.hpp"
#include "runara/runtime.hpp"

namespace runara {

class RunRecorder {
 public:
  void begin(const std::string& script, const Options& options);
  double start_unix() const { return start_unix_; }  // the record's start: the history row's too
  // The run's machines, asked for when the record is built.
  std::function<std::vector<RecordedMachine>()> machine_source;
  nlohmann::json finish(const Outcome& outcome);

 private:
  std::string script_;
  nlohmann::json params_, args_, flags_;
  double start_unix_ = 0;
  double start_mono_ = 0;
};

// "ok", "failed", "stopped" (a signal or a host's cancel), "watchdog", or "thresholds".
std::string run_status(Exit exit);
// The "file:line" an error message starts with or contains ("script.lua:12: boom"), or "".
std::string error_location(std::string_view message);
// "2026-11-23T22:40:01.250Z".
std::string utc_text(double unix_seconds);
double unix_now();
// The outcome of a whole run: the script's, unless it succeeded and the end (teardown,
// leftover tasks) did not.
Outcome merge_outcomes(Outcome run, Outcome end);

}  // namespace runara

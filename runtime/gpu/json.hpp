// GPU readings, facts and summaries as JSON: the one spelling of their field names, shared by
// what scripts get (gpu_metrics.read, sampler:stop()) and what results.json records. A value the
// tool did not report is left out (nil in Lua), never written as 0.
//
// Contract: pure functions (no I/O, no Lua), any thread.
#pragma once

#include <nlohmann/json.hpp>

#include "gpu/backend.hpp"
#include "gpu/summary.hpp"

namespace runara::gpu {

nlohmann::json reading_json(const GpuReading& r);
nlohmann::json static_json(const GpuStatic& s);
nlohmann::json phase_json(const PhaseSummary& p);
nlohmann::json sample_json(const Sample& s);

}  // namespace runara::gpu

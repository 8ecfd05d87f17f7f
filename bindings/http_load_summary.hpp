// What http_load.run shows as each point finishes: the summary (one load) or a table row
// (a sweep) on the run's standard output unless quiet, and each crossed threshold reported to
// the run (which then exits with status 4).
//
// Contract. The returned function runs on the run's event loop (LoadJob::Hooks::point_finished)
// and uses only the public Context, which must outlive it (the run outlives its loads).
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

#include "runara/primitive.hpp"

namespace runara {

std::function<void(const nlohmann::json& result)> point_reporter(Context& ctx, bool quiet, bool sweep);

}  // namespace runara

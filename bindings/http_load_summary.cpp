#include "http_load_summary.hpp"

#include <memory>

#include "load_job/summary.hpp"
#include "runara/runtime.hpp"

namespace runara {

std::function<void(const nlohmann::json& result)> point_reporter(Context& ctx, bool quiet, bool sweep) {
  auto rows = std::make_shared<int>(0);
  return [&ctx, quiet, sweep, rows](const nlohmann::json& r) {
    const std::string label = r.value("label", std::string());
    if (const auto it = r.find("thresholds_crossed"); it != r.end() && it->is_array()) {
      for (const auto& crossed : *it) ctx.report_threshold_crossed("http_load " + label + ": " + crossed.get<std::string>());
    }
    if (quiet) return;
    // On the simulated cloud every figure printed says so: a rehearsal must never pass for a run.
    const bool simulated = ctx.options().simulated;
    if (!sweep) {
      const std::string text = load_summary_text(r);
      return ctx.print(simulated ? "SIMULATED (runara --sim: no GPU ran; a latency model's numbers)\n" + text : text);
    }
    const bool first = (*rows)++ == 0;
    ctx.print((first ? (simulated ? "SIMULATED (runara --sim)\n" : "") + sweep_header_text() : std::string()) + sweep_row_text(r));
  };
}

}  // namespace runara

// What metrics.scrape hands a script, as JSON (the GPU reader's is gpu/json.hpp): one scrape's
// totals and families. A sampler's results are not made as JSON: the binding pushes its samples
// and phase windows (sampler.hpp: ScrapeSample, summarize_phases) into Lua one at a time, since a
// /metrics of tens of thousands of names would make each window a tree of megabytes beside Lua's.
//
// Contract: pure, any thread; no Lua.
#pragma once

#include <nlohmann/json.hpp>

#include "metrics/prometheus_text.hpp"

namespace runara::metrics {

// { values = { name = total }, families = { name = { type, help, samples = { {name, labels, value} } } } }
nlohmann::json scrape_json(const PromParse& p);

}  // namespace runara::metrics

// The `compare_gate` global of a `runara compare` run, what its scenario (stdlib/runara_compare.lua)
// needs beyond the ordinary sandbox:
//   compare_gate.read_results(dir) -> the table of dir/results.json, or nil and why (missing,
//     unreadable, not JSON, nested too deep, too large): a damaged file is an answer, not an error;
//   compare_gate.crossed(text): a --threshold was crossed, through Context::report_threshold_crossed,
//     so the run ends with exit status 4 and the run record's status "thresholds", as an http_load
//     threshold does.
//
// Contract. Added by compare_command.cpp to its own Runtime only (no script run sees it). Both run
// on the run's thread and do not yield: results.json is a local file of at most 64 MiB, read
// through Context::readable_path, so only folders the run was granted (Permissions::earlier_runs)
// can be read, and parsed depth-limited (json_limits.hpp) with its tree bounded by the memory left.
#pragma once

#include <memory>

#include "runara/primitive.hpp"

namespace runara::cli {

std::unique_ptr<Primitive> make_compare_gate();

}  // namespace runara::cli

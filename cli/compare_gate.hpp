// The `compare_gate` global of a `runara compare` run: compare_gate.crossed(text) says that a
// --threshold was crossed, through Context::report_threshold_crossed, so the run ends with exit
// status 4 and the run record's status "thresholds", as an http_load threshold does.
//
// Contract. Added by compare_command.cpp to its own Runtime only (no script run sees it). The
// function runs on the run's thread, does not wait, and only records the text (redacted, logged).
#pragma once

#include <memory>

#include "runara/primitive.hpp"

namespace runara::cli {

std::unique_ptr<Primitive> make_compare_gate();

}  // namespace runara::cli

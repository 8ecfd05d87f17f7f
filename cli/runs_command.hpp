// `runara runs [--script NAME] [--limit N] [--real | --sim] [--json]`: the run history
// (runtime/run/history.hpp), newest first, with each run's headline figures and whether its
// output folder is still there.
//
// Contract. The CLI's main thread; returns the process exit status (0, 1 when the history cannot
// be read, 2 for a usage error). Reads $RUNARA_STATE_DIR/history.db and never creates it.
#pragma once

#include <string>
#include <vector>

#include "run/history.hpp"

namespace runara::cli {

int runs_command(int argc, char** argv);

// The history's runs for `query`, or an error message (also when nothing was ever recorded).
std::vector<HistoryEntry> history_runs(const HistoryQuery& query, std::string& error);

}  // namespace runara::cli

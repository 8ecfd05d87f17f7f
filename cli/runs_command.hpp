// `runara runs [--script NAME] [--limit N] [--real | --sim] [--json]`: the run history
// (runtime/run/history.hpp), newest first, with each run's headline figures and whether its
// output folder is still there. A run still running shows as "running"; one whose row says
// running but whose process is gone shows as "killed" (run/history_entry.hpp's as_seen_now).
//
// Contract. The CLI's main thread; returns the process exit status (0, 1 when the history cannot
// be read, 2 for a usage error). Reads $RUNARA_STATE_DIR/history.db and never creates it (an
// older one gains its newer columns when opened, as every RunHistory does); never rewrites a row.
#pragma once

#include <string>
#include <vector>

#include "run/history.hpp"

namespace runara::cli {

int runs_command(int argc, char** argv);

// The history's runs for `query` as they stand now (as_seen_now), or an error message (also when
// nothing was ever recorded).
std::vector<HistoryEntry> history_runs(const HistoryQuery& query, std::string& error);

}  // namespace runara::cli

// A sweep's table as files: sweep.json (an array, one object per point) and sweep.csv (the same
// rows), in <out>/<load name>/, rewritten as each point finishes so that a stopped sweep keeps
// the points it measured.
//
// Contract. sweep_row is pure (any thread). write_sweep_files does file I/O: call it off the
// event loop (the job's worker pool), with rows the caller copied (already redacted).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace runara {

// The row of one point, from its result JSON (load/report.hpp's keys).
nlohmann::json sweep_row(const nlohmann::json& result);

// The rows as CSV: a header line with the row's keys, then one line per row.
std::string sweep_csv(const nlohmann::json& rows);

// Writes `dir`/sweep.json and `dir`/sweep.csv; "" or an error message.
std::string write_sweep_files(const std::string& dir, const nlohmann::json& rows);

}  // namespace runara

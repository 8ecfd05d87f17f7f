// What a finished load prints without the script writing any code: a summary laid out like
// `vllm bench serve`'s, and for a sweep one row per point as it finishes.
//
// Contract. Pure formatting of a load's result JSON (load/report.hpp's keys), any thread; no
// I/O. The caller prints the text (redacted) and decides whether to (`quiet`).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace runara {

// The multi-line summary of one load (ends with a newline).
std::string load_summary_text(const nlohmann::json& result);

// A sweep's table: the header line, and one row per point (each ends with a newline).
std::string sweep_header_text();
std::string sweep_row_text(const nlohmann::json& result);

// A note when a closed loop's concurrency could never be reached (fewer requests than
// streams): "" when it was reached, or the load was open.
std::string unreached_concurrency_note(const nlohmann::json& result);

}  // namespace runara

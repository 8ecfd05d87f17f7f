// Writing a JSON document as text with the text's memory charged to the run's budget.
//
// Contract: nlohmann's dump() grows its string without limit, and the text may be far larger
// than the document (indentation repeats at every line, escapes take six bytes for one), so a
// small tree could make the runtime allocate gigabytes past --max-memory. dump_json_charged
// reserves every growth of the text's buffer from `held` before it happens and stops as soon as
// the budget refuses one. The caller keeps `held` until the text is handed on (e.g. pushed to
// Lua, whose heap then counts it). Throws nlohmann::json::exception for a string that is not
// UTF-8, as dump() does; nothing else.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runara/memory_budget.hpp"

namespace runara {

// The text of `doc` (indent < 0: compact, as dump()), or nullopt when the budget refused; then
// `needed` holds the buffer size that was refused (for MemoryBudget::refusal).
std::optional<std::string> dump_json_charged(const nlohmann::json& doc, int indent, MemoryReservation& held,
                                             std::size_t& needed);

}  // namespace runara

// amd-smi's JSON output: `amd-smi metric --json` (one reading per GPU) and `amd-smi static --json`
// (facts). Both shapes seen in the field are accepted: the ROCm 6.x top-level list
// `[ {"gpu": 0, ...}, ... ]` and the ROCm 7.x dict `{"gpu_data": [ ... ]}`; leaves as bare numbers,
// "N/A" strings or {"value", "unit"} objects (scaled by the unit: "MB" is 2^20 bytes, as amd-smi
// means it; "uJ" counters become joules).
//
// Contract: pure functions (no I/O, no Lua), any thread, never throw. Text that is not JSON,
// is cut off, nests too deep (runara::parse_json_limited) or holds no GPU entry gives `error`
// ("amd-smi metric --json: not valid JSON: ..."); a GPU entry with nothing readable gives a
// reading whose fields are all nullopt.
#pragma once

#include <string_view>

#include "gpu/sample.hpp"

namespace runara::gpu {

// Tries amd_smi_fast.hpp's one-pass reader first and falls back to the reference below.
ParsedReadings parse_amd_smi_metric(std::string_view json_text);
// The same result through nlohmann's document: the definition the fast path must agree with,
// and the source of every error message.
ParsedReadings parse_amd_smi_metric_reference(std::string_view json_text);
ParsedStatic parse_amd_smi_static(std::string_view json_text);

}  // namespace runara::gpu

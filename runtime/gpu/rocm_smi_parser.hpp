// rocm-smi's output: `rocm-smi --showuse --showmemuse --showmeminfo vram --showpower --showtemp
// --showclocks --json` (a dict keyed "card0".."cardN" plus "system", every value a string such
// as "36.0" or "(1402Mhz)") and the default "Concise Info" table (both its old two-lines-per-GPU
// layout and the newer one with "(DID, GUID)"), which gives power, temperature, clocks and
// percentages only.
//
// Contract: pure functions (no I/O, no Lua), any thread, never throw. Output with no GPU in it
// (empty, cut before the first row, an error message such as "ROCm System Management Interface
// not found") gives `error` quoting what came instead; unreadable cells give nullopt fields.
#pragma once

#include <string_view>

#include "gpu/sample.hpp"

namespace runara::gpu {

ParsedReadings parse_rocm_smi_json(std::string_view json_text);
ParsedStatic parse_rocm_smi_json_static(std::string_view json_text);
ParsedReadings parse_rocm_smi_concise(std::string_view table_text);

}  // namespace runara::gpu

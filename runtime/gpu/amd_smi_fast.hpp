// A fast path for parse_amd_smi_metric: one pass over the text that reads only the fields a
// GpuReading needs and skips everything else without building a document (nlohmann's DOM costs
// ~0.4 ms for an 8-GPU sample; a sampler at 10 Hz parses one every 100 ms).
//
// Contract: a pure function (no I/O, no Lua, any thread), never throws, recursion bounded by
// kMaxJsonDepth. It answers only when it is sure to agree with the reference
// (parse_amd_smi_metric_reference, nlohmann): on anything unusual — invalid or too deep JSON,
// escapes in keys or in values it reads, non-ASCII bytes in strings, numbers out of range,
// duplicate "gpu_data", a shape the reference would report as an error — it returns nullopt
// and the caller asks the reference. tests/unit/test_gpu_parsers.cpp and
// tests/fuzz/fuzz_gpu_parsers.cpp check the agreement.
#pragma once

#include <optional>
#include <string_view>

#include "gpu/sample.hpp"

namespace runara::gpu {

std::optional<ParsedReadings> parse_amd_smi_metric_fast(std::string_view json_text);

}  // namespace runara::gpu

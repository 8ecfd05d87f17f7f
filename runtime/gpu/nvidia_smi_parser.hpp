// nvidia-smi's CSV: `nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]`, once or
// streaming with `-lms N` (one line per GPU per tick). Columns are found by name: from the header
// line when there is one ("memory.used [MiB]"), else from the field list the caller asked for.
// Cells carry their unit ("19818 MiB", "631.95 W") or not (nounits; memory.* is then MiB);
// "N/A", "[N/A]" and "[Not Supported]"/"[Requested functionality ...]" become nullopt.
//
// Contract: pure functions (no I/O, no Lua), any thread, never throw. A line with the wrong
// number of cells (a driver error such as "NVIDIA-SMI has failed because it couldn't communicate
// with the NVIDIA driver", a cut line) gives an error quoting the line (at most 160 bytes).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpu/sample.hpp"

namespace runara::gpu {

// The fields runara asks for, in this order, when sampling and when reading static facts.
const std::vector<std::string>& nvidia_sample_fields();
const std::vector<std::string>& nvidia_static_fields();

// Names of the columns from a header line ("index, memory.used [MiB]" -> {"index", "memory.used"}),
// or an empty list if `line` is not a header (its first cell is a number or "N/A").
std::vector<std::string> nvidia_header_columns(std::string_view line);

// One data line against `columns`. Returns "" and fills `out`, or an error. `position` is the
// GPU index used when there is no "index" column.
std::string parse_nvidia_smi_line(std::string_view line, const std::vector<std::string>& columns, int position,
                                  GpuReading& out);

// A whole output: an optional header line, then one line per GPU (blank lines skipped).
ParsedReadings parse_nvidia_smi_csv(std::string_view text, const std::vector<std::string>& fields);
ParsedStatic parse_nvidia_smi_static(std::string_view text, const std::vector<std::string>& fields);

}  // namespace runara::gpu

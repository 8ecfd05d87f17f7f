// The samples of a sampling run as CSV text: one row per GPU per sample, the phase (label of the
// last mark at or before the sample; "" before the first) on each row, empty cells for values
// the tool did not report. Units are in the header names (power_w, vram_used_bytes, ...).
//
// Contract: a pure function (no I/O, no Lua, any thread); the caller writes the text where it
// belongs (the run's output folder). Labels are quoted per RFC 4180 so a comma or quote in a
// script's label cannot shift columns.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/summary.hpp"

namespace runara::gpu {

std::string samples_csv(const std::vector<Sample>& samples, const std::vector<Mark>& marks);

// The same text's length, without making it (to charge it to --max-memory first); samples_csv
// then makes it at exactly that size.
std::size_t samples_csv_bytes(const std::vector<Sample>& samples, const std::vector<Mark>& marks);

// The same text in pieces of about 64 KiB, each handed to `write` (which returns false to stop):
// written to a file without ever holding all of it.
void samples_csv_pieces(const std::vector<Sample>& samples, const std::vector<Mark>& marks,
                        const std::function<bool(std::string_view piece)>& write);

}  // namespace runara::gpu

// Reading the loose value spellings GPU tools print: "631.95 W", "[N/A]", "N/A", "(1402Mhz)",
// "35.0°C", "19818 MiB", and amd-smi's {"value": x, "unit": "W"} leaves. Shared by the parsers.
//
// Contract: pure functions, no I/O, no allocation beyond the returned values, never throw.
// Anything unreadable is std::nullopt (a field the tool did not report), never 0.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace runara::gpu {

// A number at the start of `text` (leading blanks and one '(' skipped), followed only by an
// optional unit and blanks/')'. "N/A", "[N/A]", "", "[Requested ...]" and NaN/inf: nullopt.
std::optional<double> leading_number(std::string_view text);

// The unit after the number ("W" in "631.95 W", "Mhz" in "(1402Mhz)"), "" when none.
std::string_view trailing_unit(std::string_view text);

// Factor that turns a value in `unit` into SI bytes / joules / watts / MHz; nullopt for a unit
// this code does not know (so a wrong scale never goes unnoticed). "" is 1.
// amd-smi and nvidia-smi print "MB"/"MiB" for the same binary megabyte: both are 2^20.
std::optional<double> unit_factor(std::string_view unit);

// An amd-smi leaf: a bare number, "N/A", {"value": number|"N/A", "unit": "..."}, or a string
// holding a number; scaled by its unit. Anything else (lists, objects of other shapes): nullopt.
std::optional<double> json_quantity(const nlohmann::json* leaf);

// The child `key` of an object (nullptr if `j` is not an object or has no such key).
const nlohmann::json* child(const nlohmann::json* j, std::string_view key);

// A string leaf that is not "N/A"-like, else nullopt.
std::optional<std::string> json_text(const nlohmann::json* leaf);

bool is_not_available(std::string_view text);  // "N/A", "[N/A]", "NA", "", "[Not Supported]", ...

}  // namespace runara::gpu

// The three tools runara reads GPUs with, and the fixed command lines it runs for each. Only
// these lines ever reach a CommandTarget from gpu_metrics: a script picks a backend by name,
// never a command.
//
// Contract: pure (no I/O, no Lua), any thread. The command lines are plain words separated by
// single spaces with no shell syntax, so the local target can split them into an argv and an
// ssh target's shell reads them as the same argv.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpu/sample.hpp"

namespace runara::gpu {

enum class Backend { amd_smi, rocm_smi, nvidia_smi };

inline constexpr Backend kAutoDetectOrder[] = {Backend::nvidia_smi, Backend::amd_smi, Backend::rocm_smi};

std::string_view backend_name(Backend b);                   // "amd-smi", "rocm-smi", "nvidia-smi"
std::optional<Backend> backend_from_name(std::string_view name);  // those three names only

std::string static_command(Backend b);
std::string read_command(Backend b);
// A long-lived command printing one reading every `interval_ms`; "" for tools that cannot stream
// parseable output (amd-smi and rocm-smi: sampled by running read_command at the interval).
std::string stream_command(Backend b, int interval_ms);

ParsedReadings parse_read(Backend b, std::string_view output);
ParsedStatic parse_static(Backend b, std::string_view output);

}  // namespace runara::gpu

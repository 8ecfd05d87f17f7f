// What one reading of a GPU tool says, whatever the tool: the common shape every parser in
// runtime/gpu/ fills and every consumer (sampler, summaries, CSV, the Lua binding) reads.
//
// Contract: plain values, SI units (W, J, bytes, %, °C, MHz), std::nullopt wherever the tool did
// not report a value ("N/A", a missing key, a field the tool has not got). No I/O, no Lua;
// copyable, safe to hand between threads.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runara::gpu {

// What a GPU tool's output may make runara hold, whatever the host prints (docs/gpu_metrics.md):
// GPUs in one reading (no machine has more than 16; a larger index set is a hostile or broken
// tool), bytes of one command's output (amd-smi metric --json is about 10 KiB a GPU), and the
// estimated size of the JSON document parsed from it (json_tree_bytes, json_limits.hpp).
inline constexpr std::size_t kMaxGpus = 64;
inline constexpr std::size_t kMaxToolOutputBytes = std::size_t{2} << 20;
inline constexpr std::size_t kMaxToolJsonTreeBytes = std::size_t{16} << 20;

// "<what>: more than 64 GPUs in one reading": the one wording of that refusal.
inline std::string too_many_gpus(std::string_view what) {
  return std::string(what) + ": more than " + std::to_string(kMaxGpus) + " GPUs in one reading";
}

struct GpuReading {
  int index = 0;                           // the tool's GPU index
  std::optional<double> power_w;           // board/socket power now
  std::optional<double> energy_j;          // the tool's cumulative energy counter, when it has one
  std::optional<double> vram_used_bytes;
  std::optional<double> vram_total_bytes;
  std::optional<double> vram_used_pct;     // only tools that report a share, not bytes (concise tables)
  std::optional<double> gpu_util_pct;      // graphics/compute engine busy
  std::optional<double> mem_util_pct;      // memory controller busy
  std::optional<double> temp_edge_c;       // AMD edge; NVIDIA's temperature.gpu
  std::optional<double> temp_hotspot_c;    // AMD hotspot/junction
  std::optional<double> temp_memory_c;     // HBM/VRAM
  std::optional<double> clock_gfx_mhz;     // AMD gfx/sclk; NVIDIA SM clock
  std::optional<double> clock_mem_mhz;

  bool operator==(const GpuReading&) const = default;
};

// Facts that do not change during a run, for results metadata.
struct GpuStatic {
  std::optional<std::string> model;
  std::optional<std::string> vbios;
  std::optional<std::string> driver_version;
  std::optional<std::string> rocm_version;
  std::optional<std::string> cuda_version;
  std::optional<double> vram_total_bytes;  // of GPU 0
  std::optional<int> gpu_count;
};

// One parse: the GPUs read, or an error saying what was wrong with the text. A parse that
// found no GPU at all is an error, never an empty success.
struct ParsedReadings {
  std::vector<GpuReading> gpus;
  std::string error;
};

struct ParsedStatic {
  GpuStatic facts;
  std::string error;
};

}  // namespace runara::gpu

// libFuzzer target for the GPU tool parsers (runtime/gpu/): amd-smi JSON, rocm-smi JSON and
// concise table, nvidia-smi CSV.
//
// Built by CMake (tests/fuzz/CMakeLists.txt): a libFuzzer binary with clang, a replay of
// seeds and mutations under GCC (ctest runs it); see tests/fuzz/README.md.
//
// What one input checks: every parser takes the bytes without crashing; a parse either fails
// with a non-empty error and no GPU, or succeeds with at least one GPU; every value read is
// finite; the amd-smi fast path, where it answers, agrees with the nlohmann reference.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpu/amd_smi_fast.hpp"
#include "gpu/amd_smi_parser.hpp"
#include "gpu/nvidia_smi_parser.hpp"
#include "gpu/rocm_smi_parser.hpp"

namespace {

using namespace runara::gpu;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "MISMATCH: %s\n", what);
  std::abort();
}

void check_value(const std::optional<double>& v) {
  if (v && !std::isfinite(*v)) fail("a value is not finite");
}

void check(const ParsedReadings& p) {
  if (p.error.empty() == p.gpus.empty()) fail("error and GPUs disagree");
  for (const GpuReading& g : p.gpus) {
    for (auto m : {&GpuReading::power_w, &GpuReading::energy_j, &GpuReading::vram_used_bytes,
                   &GpuReading::vram_total_bytes, &GpuReading::vram_used_pct, &GpuReading::gpu_util_pct,
                   &GpuReading::mem_util_pct, &GpuReading::temp_edge_c, &GpuReading::temp_hotspot_c,
                   &GpuReading::temp_memory_c, &GpuReading::clock_gfx_mhz, &GpuReading::clock_mem_mhz})
      check_value(g.*m);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  check(parse_amd_smi_metric(text));
  // The fast path answers only where it agrees with the nlohmann reference.
  if (auto fast = parse_amd_smi_metric_fast(text)) {
    const ParsedReadings ref = parse_amd_smi_metric_reference(text);
    if (!ref.error.empty() || fast->gpus != ref.gpus) fail("amd-smi fast path disagrees with the reference");
  }
  (void)parse_amd_smi_static(text);
  check(parse_rocm_smi_json(text));
  (void)parse_rocm_smi_json_static(text);
  check(parse_rocm_smi_concise(text));
  const ParsedReadings whole = parse_nvidia_smi_csv(text, nvidia_sample_fields());
  check(whole);
  (void)parse_nvidia_smi_static(text, nvidia_static_fields());
  return 0;
}

#include "gpu/backend.hpp"

#include "gpu/amd_smi_parser.hpp"
#include "gpu/nvidia_smi_parser.hpp"
#include "gpu/rocm_smi_parser.hpp"

namespace runara::gpu {

namespace {

std::string joined(const std::vector<std::string>& fields) {
  std::string out;
  for (const auto& f : fields) out += (out.empty() ? "" : ",") + f;
  return out;
}

std::string nvidia_query(const std::vector<std::string>& fields) {
  return "nvidia-smi --query-gpu=" + joined(fields) + " --format=csv,noheader,nounits";
}

}  // namespace

std::string_view backend_name(Backend b) {
  switch (b) {
    case Backend::amd_smi: return "amd-smi";
    case Backend::rocm_smi: return "rocm-smi";
    case Backend::nvidia_smi: return "nvidia-smi";
  }
  return "?";
}

std::optional<Backend> backend_from_name(std::string_view name) {
  for (Backend b : kAutoDetectOrder)
    if (backend_name(b) == name) return b;
  return std::nullopt;
}

std::string static_command(Backend b) {
  switch (b) {
    case Backend::amd_smi: return "amd-smi static --json";
    case Backend::rocm_smi: return "rocm-smi --showproductname --showvbios --showmeminfo vram --showdriverversion --json";
    case Backend::nvidia_smi: return nvidia_query(nvidia_static_fields());
  }
  return {};
}

std::string read_command(Backend b) {
  switch (b) {
    case Backend::amd_smi: return "amd-smi metric --json";
    case Backend::rocm_smi:
      return "rocm-smi --showuse --showmemuse --showmeminfo vram --showpower --showtemp --showclocks "
             "--showenergycounter --json";
    case Backend::nvidia_smi: return nvidia_query(nvidia_sample_fields());
  }
  return {};
}

std::string stream_command(Backend b, int interval_ms) {
  if (b != Backend::nvidia_smi) return {};
  return nvidia_query(nvidia_sample_fields()) + " -lms " + std::to_string(interval_ms);
}

ParsedReadings parse_read(Backend b, std::string_view output) {
  switch (b) {
    case Backend::amd_smi: return parse_amd_smi_metric(output);
    case Backend::rocm_smi: return parse_rocm_smi_json(output);
    case Backend::nvidia_smi: return parse_nvidia_smi_csv(output, nvidia_sample_fields());
  }
  return {};
}

ParsedStatic parse_static(Backend b, std::string_view output) {
  switch (b) {
    case Backend::amd_smi: return parse_amd_smi_static(output);
    case Backend::rocm_smi: return parse_rocm_smi_json_static(output);
    case Backend::nvidia_smi: return parse_nvidia_smi_static(output, nvidia_static_fields());
  }
  return {};
}

}  // namespace runara::gpu

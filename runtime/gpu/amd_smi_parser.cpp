#include "gpu/amd_smi_parser.hpp"

#include "gpu/amd_smi_fast.hpp"
#include "gpu/tool_values.hpp"
#include "base/json_limits.hpp"

namespace runara::gpu {

namespace {

using nlohmann::json;

// The list of per-GPU objects in either shape, or nullptr with `error` set.
const json* gpu_list(const json& doc, const char* what, std::string& error) {
  const json* list = doc.is_array() ? &doc : child(&doc, "gpu_data");
  if (!list || !list->is_array()) {
    error = std::string(what) + ": expected a list of GPUs or {\"gpu_data\": [...]}, got " +
            (doc.is_object() ? "an object without \"gpu_data\"" : std::string(doc.type_name()));
    return nullptr;
  }
  if (list->empty()) error = std::string(what) + ": the tool listed no GPU";
  return list->empty() ? nullptr : list;
}

std::optional<json> parse_doc(std::string_view text, const char* what, std::string& error) {
  std::string why;
  auto doc = parse_json_limited(text, why, kMaxJsonDepth, kMaxToolJsonTreeBytes);
  if (!doc) error = std::string(what) + ": " + why;
  return doc;
}

int gpu_index(const json& entry, int position) {
  const json* id = child(&entry, "gpu");
  return id && id->is_number_integer() ? id->get<int>() : position;
}

// A clock entry: "gfx_0"/"mem_0" (ROCm 6.1+) or "gfx"/"mem" (older), holding "clk".
std::optional<double> clock_of(const json* clock, const char* numbered, const char* plain) {
  const json* c = child(clock, numbered);
  if (!c) c = child(clock, plain);
  return json_quantity(child(c, "clk"));
}

// Power: MI300 and newer say socket_power; some versions average_/current_socket_power.
std::optional<double> power_of(const json* power) {
  for (const char* key : {"socket_power", "current_socket_power", "average_socket_power"})
    if (auto v = json_quantity(child(power, key))) return v;
  return std::nullopt;
}

GpuReading reading_of(const json& entry, int position) {
  GpuReading r;
  r.index = gpu_index(entry, position);
  r.power_w = power_of(child(&entry, "power"));
  const json* energy = child(&entry, "energy");
  r.energy_j = json_quantity(child(energy, "total_energy_consumption"));
  const json* mem = child(&entry, "mem_usage");
  r.vram_used_bytes = json_quantity(child(mem, "used_vram"));
  r.vram_total_bytes = json_quantity(child(mem, "total_vram"));
  const json* usage = child(&entry, "usage");
  r.gpu_util_pct = json_quantity(child(usage, "gfx_activity"));
  r.mem_util_pct = json_quantity(child(usage, "umc_activity"));
  const json* temp = child(&entry, "temperature");
  r.temp_edge_c = json_quantity(child(temp, "edge"));
  r.temp_hotspot_c = json_quantity(child(temp, "hotspot"));
  r.temp_memory_c = json_quantity(child(temp, "mem"));
  const json* clock = child(&entry, "clock");
  r.clock_gfx_mhz = clock_of(clock, "gfx_0", "gfx");
  r.clock_mem_mhz = clock_of(clock, "mem_0", "mem");
  return r;
}

}  // namespace

ParsedReadings parse_amd_smi_metric(std::string_view text) {
  if (auto fast = parse_amd_smi_metric_fast(text)) return std::move(*fast);
  return parse_amd_smi_metric_reference(text);
}

ParsedReadings parse_amd_smi_metric_reference(std::string_view text) {
  ParsedReadings out;
  const char* what = "amd-smi metric --json";
  auto doc = parse_doc(text, what, out.error);
  if (!doc) return out;
  const json* list = gpu_list(*doc, what, out.error);
  if (!list) return out;
  if (list->size() > kMaxGpus) {
    out.error = too_many_gpus(what);
    return out;
  }
  int position = 0;
  for (const json& entry : *list) {
    if (!entry.is_object()) {
      out.gpus.clear();
      out.error = std::string(what) + ": GPU entry " + std::to_string(position) + " is " + entry.type_name() +
                  ", expected an object";
      return out;
    }
    out.gpus.push_back(reading_of(entry, position++));
  }
  return out;
}

ParsedStatic parse_amd_smi_static(std::string_view text) {
  ParsedStatic out;
  const char* what = "amd-smi static --json";
  auto doc = parse_doc(text, what, out.error);
  if (!doc) return out;
  const json* list = gpu_list(*doc, what, out.error);
  if (!list) return out;
  const json& first = list->front();
  if (!first.is_object()) {
    out.error = std::string(what) + ": GPU entry 0 is " + first.type_name() + ", expected an object";
    return out;
  }
  GpuStatic& f = out.facts;
  f.gpu_count = static_cast<int>(list->size());
  const json* asic = child(&first, "asic");
  f.model = json_text(child(asic, "market_name"));
  const json* vbios = child(&first, "vbios");
  f.vbios = json_text(child(vbios, "version"));
  if (!f.vbios) f.vbios = json_text(child(vbios, "part_number"));
  f.driver_version = json_text(child(child(&first, "driver"), "version"));
  f.vram_total_bytes = json_quantity(child(child(&first, "vram"), "size"));
  return out;
}

}  // namespace runara::gpu

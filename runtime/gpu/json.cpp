#include "gpu/json.hpp"

namespace runara::gpu {

namespace {

template <class T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

}  // namespace

nlohmann::json reading_json(const GpuReading& r) {
  nlohmann::json j = {{"index", r.index}};
  put(j, "power_w", r.power_w);
  put(j, "energy_j", r.energy_j);
  put(j, "vram_used_bytes", r.vram_used_bytes);
  put(j, "vram_total_bytes", r.vram_total_bytes);
  put(j, "vram_used_pct", r.vram_used_pct);
  put(j, "gpu_util_pct", r.gpu_util_pct);
  put(j, "mem_util_pct", r.mem_util_pct);
  put(j, "temp_edge_c", r.temp_edge_c);
  put(j, "temp_hotspot_c", r.temp_hotspot_c);
  put(j, "temp_memory_c", r.temp_memory_c);
  put(j, "clock_gfx_mhz", r.clock_gfx_mhz);
  put(j, "clock_mem_mhz", r.clock_mem_mhz);
  return j;
}

nlohmann::json static_json(const GpuStatic& s) {
  nlohmann::json j = nlohmann::json::object();
  put(j, "model", s.model);
  put(j, "vbios", s.vbios);
  put(j, "driver_version", s.driver_version);
  put(j, "rocm_version", s.rocm_version);
  put(j, "cuda_version", s.cuda_version);
  put(j, "vram_total_bytes", s.vram_total_bytes);
  put(j, "gpu_count", s.gpu_count);
  return j;
}

nlohmann::json sample_json(const Sample& s) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuReading& g : s.gpus) gpus.push_back(reading_json(g));
  return {{"t_s", s.t_s}, {"gpus", std::move(gpus)}};
}

nlohmann::json phase_json(const PhaseSummary& p) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuStats& g : p.gpus) {
    nlohmann::json j = {{"index", g.index}, {"samples", g.samples}};
    put(j, "mean_power_w", g.mean_power_w);
    put(j, "max_power_w", g.max_power_w);
    put(j, "energy_j", g.energy_j);
    if (g.energy_j) j["energy_source"] = g.energy_from_counter ? "counter" : "trapezoid";
    if (!g.energy_note.empty()) j["energy_note"] = g.energy_note;
    put(j, "counter_energy_j", g.counter_energy_j);
    put(j, "integrated_energy_j", g.integrated_energy_j);
    put(j, "max_vram_used_bytes", g.max_vram_used_bytes);
    put(j, "mean_gpu_util_pct", g.mean_gpu_util_pct);
    put(j, "mean_mem_util_pct", g.mean_mem_util_pct);
    put(j, "max_temp_edge_c", g.max_temp_edge_c);
    put(j, "max_temp_hotspot_c", g.max_temp_hotspot_c);
    put(j, "max_temp_memory_c", g.max_temp_memory_c);
    gpus.push_back(std::move(j));
  }
  nlohmann::json j = {{"label", p.label}, {"start_s", p.start_s}, {"end_s", p.end_s}, {"gpus", std::move(gpus)}};
  put(j, "energy_j", p.energy_j);
  if (!p.energy_source.empty()) j["energy_source"] = p.energy_source;
  if (!p.energy_note.empty()) j["energy_note"] = p.energy_note;
  put(j, "mean_power_w", p.mean_power_w);
  put(j, "peak_vram_bytes", p.peak_vram_bytes);
  return j;
}

}  // namespace runara::gpu

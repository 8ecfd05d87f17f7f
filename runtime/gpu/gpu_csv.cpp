#include "gpu/gpu_csv.hpp"

#include <charconv>
#include <cstdio>

namespace runara::gpu {

namespace {

std::string csv_quoted(const std::string& label) {
  std::string out = "\"";
  for (char c : label) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void number(std::string& out, const std::optional<double>& v) {
  out += ',';
  if (!v) return;
  // Shortest text that reads back as the same double: bytes past 10 digits stay exact.
  // Fixed notation (no "1e+09" for a byte count); a value too long for it falls back to general.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, *v, std::chars_format::fixed);
  if (r.ec != std::errc()) r = std::to_chars(buf, buf + sizeof buf, *v);
  out.append(buf, r.ec == std::errc() ? r.ptr : buf);
}

}  // namespace

std::string samples_csv(const std::vector<Sample>& samples, const std::vector<Mark>& marks) {
  std::string out =
      "t_s,phase,gpu,power_w,energy_j,vram_used_bytes,vram_total_bytes,vram_used_pct,gpu_util_pct,mem_util_pct,"
      "temp_edge_c,temp_hotspot_c,temp_memory_c,clock_gfx_mhz,clock_mem_mhz\n";
  std::size_t next_mark = 0;
  std::string phase;
  for (const Sample& s : samples) {
    while (next_mark < marks.size() && marks[next_mark].t_s <= s.t_s) phase = marks[next_mark++].label;
    for (const GpuReading& g : s.gpus) {
      char head[48];
      std::snprintf(head, sizeof head, "%.6f,", s.t_s);
      out += head;
      out += phase.empty() ? std::string() : csv_quoted(phase);
      out += ',' + std::to_string(g.index);
      for (auto m : {&GpuReading::power_w, &GpuReading::energy_j, &GpuReading::vram_used_bytes,
                     &GpuReading::vram_total_bytes, &GpuReading::vram_used_pct, &GpuReading::gpu_util_pct,
                     &GpuReading::mem_util_pct, &GpuReading::temp_edge_c, &GpuReading::temp_hotspot_c,
                     &GpuReading::temp_memory_c, &GpuReading::clock_gfx_mhz, &GpuReading::clock_mem_mhz})
        number(out, g.*m);
      out += '\n';
    }
  }
  return out;
}

}  // namespace runara::gpu

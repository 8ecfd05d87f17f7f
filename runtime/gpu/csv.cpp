#include "gpu/csv.hpp"

#include <charconv>
#include <cstdio>

namespace runara::gpu {

namespace {

constexpr const char* kHeader =
    "t_s,phase,gpu,power_w,energy_j,vram_used_bytes,vram_total_bytes,vram_used_pct,gpu_util_pct,mem_util_pct,"
    "temp_edge_c,temp_hotspot_c,temp_memory_c,clock_gfx_mhz,clock_mem_mhz\n";

void csv_quoted(std::string& out, const std::string& label) {
  out += '"';
  for (char c : label) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
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

// Every row, each appended to `row` (cleared first) and handed to `each`; false from it stops.
template <class Each>
void rows(const std::vector<Sample>& samples, const std::vector<Mark>& marks, std::string& row, Each each) {
  std::size_t next_mark = 0;
  const std::string* phase = nullptr;
  for (const Sample& s : samples) {
    while (next_mark < marks.size() && marks[next_mark].t_s <= s.t_s) phase = &marks[next_mark++].label;
    for (const GpuReading& g : s.gpus) {
      row.clear();
      char head[48];
      std::snprintf(head, sizeof head, "%.6f,", s.t_s);
      row += head;
      if (phase && !phase->empty()) csv_quoted(row, *phase);
      row += ',';
      row += std::to_string(g.index);
      for (auto m : {&GpuReading::power_w, &GpuReading::energy_j, &GpuReading::vram_used_bytes,
                     &GpuReading::vram_total_bytes, &GpuReading::vram_used_pct, &GpuReading::gpu_util_pct,
                     &GpuReading::mem_util_pct, &GpuReading::temp_edge_c, &GpuReading::temp_hotspot_c,
                     &GpuReading::temp_memory_c, &GpuReading::clock_gfx_mhz, &GpuReading::clock_mem_mhz})
        number(row, g.*m);
      row += '\n';
      if (!each(std::string_view(row))) return;
    }
  }
}

}  // namespace

std::size_t samples_csv_bytes(const std::vector<Sample>& samples, const std::vector<Mark>& marks) {
  std::size_t n = std::string_view(kHeader).size();
  std::string row;
  rows(samples, marks, row, [&](std::string_view r) {
    n += r.size();
    return true;
  });
  return n;
}

std::string samples_csv(const std::vector<Sample>& samples, const std::vector<Mark>& marks) {
  std::string out;
  out.reserve(samples_csv_bytes(samples, marks));
  out += kHeader;
  std::string row;
  rows(samples, marks, row, [&](std::string_view r) {
    out += r;
    return true;
  });
  return out;
}

void samples_csv_pieces(const std::vector<Sample>& samples, const std::vector<Mark>& marks,
                        const std::function<bool(std::string_view piece)>& write) {
  constexpr std::size_t kPiece = 64u << 10;
  std::string piece = kHeader, row;
  bool ok = true;
  rows(samples, marks, row, [&](std::string_view r) {
    piece += r;
    if (piece.size() < kPiece) return true;
    ok = write(piece);
    piece.clear();
    return ok;
  });
  if (ok && !piece.empty()) write(piece);
}

}  // namespace runara::gpu

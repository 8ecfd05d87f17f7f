#include "gpu/nvidia_smi_parser.hpp"
#include "base/text.hpp"

#include <algorithm>

#include "gpu/tool_values.hpp"

namespace runara::gpu {

namespace {

// nvidia-smi separates cells with ", " and never quotes; names hold no comma.
std::vector<std::string_view> cells(std::string_view line) {
  std::vector<std::string_view> out;
  for (;;) {
    const std::size_t comma = line.find(',');
    out.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return out;
    line.remove_prefix(comma + 1);
  }
}

std::string quoted(std::string_view line) {
  constexpr std::size_t kMax = 160;
  std::string q = "\"" + std::string(line.substr(0, kMax)) + (line.size() > kMax ? "...\"" : "\"");
  return q;
}

// A cell scaled to SI: its own unit when printed, else the field's (memory.* is MiB).
std::optional<double> quantity(std::string_view cell, std::string_view field) {
  auto v = leading_number(cell);
  if (!v) return std::nullopt;
  std::string_view unit = trailing_unit(cell);
  if (unit.empty() && field.starts_with("memory.")) unit = "MiB";
  auto f = unit_factor(unit);
  return f ? std::optional<double>(*v * *f) : std::nullopt;
}

void assign(GpuReading& r, std::string_view field, std::string_view cell) {
  struct Slot {
    std::string_view field;
    std::optional<double> GpuReading::*member;
  };
  static constexpr Slot kSlots[] = {
      {"power.draw", &GpuReading::power_w},
      {"memory.used", &GpuReading::vram_used_bytes},
      {"memory.total", &GpuReading::vram_total_bytes},
      {"utilization.gpu", &GpuReading::gpu_util_pct},
      {"utilization.memory", &GpuReading::mem_util_pct},
      {"temperature.gpu", &GpuReading::temp_edge_c},
      {"temperature.memory", &GpuReading::temp_memory_c},
      {"clocks.current.sm", &GpuReading::clock_gfx_mhz},
      {"clocks.sm", &GpuReading::clock_gfx_mhz},
      {"clocks.current.memory", &GpuReading::clock_mem_mhz},
      {"clocks.mem", &GpuReading::clock_mem_mhz},
  };
  for (const Slot& s : kSlots)
    if (s.field == field) r.*s.member = quantity(cell, field);
}

}  // namespace

const std::vector<std::string>& nvidia_sample_fields() {
  static const std::vector<std::string> kFields = {
      "index",           "power.draw",         "memory.used",     "memory.total",      "utilization.gpu",
      "utilization.memory", "temperature.gpu", "temperature.memory", "clocks.current.sm", "clocks.current.memory"};
  return kFields;
}

const std::vector<std::string>& nvidia_static_fields() {
  static const std::vector<std::string> kFields = {"index", "name", "vbios_version", "driver_version", "memory.total",
                                                   "count"};
  return kFields;
}

std::vector<std::string> nvidia_header_columns(std::string_view line) {
  std::vector<std::string> out;
  auto cs = cells(line);
  if (cs.empty() || cs[0].empty() || leading_number(cs[0]) || is_not_available(cs[0])) return out;
  for (std::string_view c : cs) {
    const std::size_t unit = c.find(" [");
    const std::string_view name = trim(c.substr(0, unit));
    for (char ch : name)
      if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_'))
        return {};
    out.emplace_back(name);
  }
  return out;
}

std::string parse_nvidia_smi_line(std::string_view line, const std::vector<std::string>& columns, int position,
                                  GpuReading& out) {
  auto cs = cells(line);
  if (cs.size() != columns.size())
    return "nvidia-smi: expected " + std::to_string(columns.size()) + " comma-separated values, got " +
           std::to_string(cs.size()) + ": " + quoted(line);
  out = GpuReading{};
  out.index = position;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    if (columns[i] == "index") {
      auto v = leading_number(cs[i]);
      if (!v || *v < 0 || *v > 1e6 || *v != static_cast<int>(*v)) return "nvidia-smi: bad GPU index in " + quoted(line);
      out.index = static_cast<int>(*v);
    } else {
      assign(out, columns[i], cs[i]);
    }
  }
  return {};
}

namespace {

// Calls `each(line, columns, position)` for every data line; returns the first error.
template <class Each>
std::string for_each_line(std::string_view text, const std::vector<std::string>& fields, Each each) {
  std::vector<std::string> columns = fields;
  int position = 0;
  bool first = true;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty()) continue;
    if (first) {
      first = false;
      auto header = nvidia_header_columns(line);
      // A header names at least one field we asked for; any other word line is an error text.
      const bool asked = std::any_of(header.begin(), header.end(), [&](const std::string& h) {
        return std::find(fields.begin(), fields.end(), h) != fields.end();
      });
      if (asked) {
        columns = std::move(header);
        continue;
      }
    }
    if (std::string error = each(line, columns, position++); !error.empty()) return error;
  }
  return position == 0 ? "nvidia-smi: no GPU line in the output" : std::string();
}

}  // namespace

ParsedReadings parse_nvidia_smi_csv(std::string_view text, const std::vector<std::string>& fields) {
  ParsedReadings out;
  out.error = for_each_line(text, fields, [&](std::string_view line, const auto& columns, int position) {
    if (out.gpus.size() >= kMaxGpus) return too_many_gpus("nvidia-smi");
    GpuReading r;
    std::string error = parse_nvidia_smi_line(line, columns, position, r);
    if (error.empty()) out.gpus.push_back(r);
    return error;
  });
  if (!out.error.empty()) out.gpus.clear();
  return out;
}

ParsedStatic parse_nvidia_smi_static(std::string_view text, const std::vector<std::string>& fields) {
  ParsedStatic out;
  int lines = 0;
  out.error = for_each_line(text, fields, [&](std::string_view line, const auto& columns, int) {
    auto cs = cells(line);
    if (cs.size() != columns.size())
      return "nvidia-smi: expected " + std::to_string(columns.size()) + " comma-separated values, got " +
             std::to_string(cs.size()) + ": " + quoted(line);
    if (lines++ > 0) return std::string();
    GpuStatic& f = out.facts;
    for (std::size_t i = 0; i < cs.size(); ++i) {
      const std::string_view c = cs[i];
      const std::string& name = columns[i];
      auto text_of = [&]() { return is_not_available(c) ? std::nullopt : std::optional<std::string>(c); };
      if (name == "name") f.model = text_of();
      else if (name == "vbios_version") f.vbios = text_of();
      else if (name == "driver_version") f.driver_version = text_of();
      else if (name == "memory.total") f.vram_total_bytes = quantity(c, name);
      else if (name == "count") {
        auto v = leading_number(c);
        if (v && *v >= 0 && *v < 1e6) f.gpu_count = static_cast<int>(*v);
      }
    }
    return std::string();
  });
  if (!out.error.empty()) out.facts = GpuStatic{};
  else if (!out.facts.gpu_count) out.facts.gpu_count = lines;
  return out;
}

}  // namespace runara::gpu

#include "gpu/rocm_smi_parser.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <vector>

#include "gpu/tool_values.hpp"
#include "base/json_limits.hpp"

namespace runara::gpu {

namespace {

using nlohmann::json;

std::optional<double> cell(const json* card, std::string_view key) { return json_quantity(child(card, key)); }

// A string cell with its unit taken from the key ("... (B)") rather than the text.
std::optional<double> first_of(const json* card, std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys)
    if (auto v = cell(card, k)) return v;
  return std::nullopt;
}

// "card3" -> 3; anything else -> nullopt.
std::optional<int> card_number(std::string_view key) {
  if (!key.starts_with("card") || key.size() == 4) return std::nullopt;
  int n = 0;
  auto [end, ec] = std::from_chars(key.data() + 4, key.data() + key.size(), n);
  if (ec != std::errc() || end != key.data() + key.size() || n < 0) return std::nullopt;
  return n;
}

// The cards in index order, or an error.
std::vector<std::pair<int, const json*>> cards_of(const json& doc, const char* what, std::string& error) {
  std::vector<std::pair<int, const json*>> cards;
  if (!doc.is_object()) {
    error = std::string(what) + ": expected an object keyed \"card0\"..., got " + doc.type_name();
    return cards;
  }
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (auto n = card_number(it.key()); n && it->is_object()) cards.emplace_back(*n, &*it);
  if (cards.size() > kMaxGpus) {
    error = too_many_gpus(what);
    cards.clear();
    return cards;
  }
  std::sort(cards.begin(), cards.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (cards.empty()) error = std::string(what) + ": no \"cardN\" entry in the output";
  return cards;
}

std::optional<json> parse_doc(std::string_view text, const char* what, std::string& error) {
  std::string why;
  auto doc = parse_json_limited(text, why, kMaxJsonDepth, kMaxToolJsonTreeBytes);
  if (!doc) error = std::string(what) + ": " + why;
  return doc;
}

GpuReading reading_of(int index, const json* c) {
  GpuReading r;
  r.index = index;
  // MI300 names the power "Current Socket Graphics Package Power"; older GPUs "Average ...".
  r.power_w = first_of(c, {"Current Socket Graphics Package Power (W)", "Average Graphics Package Power (W)"});
  r.energy_j = [&]() -> std::optional<double> {
    auto uj = cell(c, "Accumulated Energy (uJ)");
    return uj ? std::optional<double>(*uj * 1e-6) : std::nullopt;
  }();
  r.vram_total_bytes = cell(c, "VRAM Total Memory (B)");
  r.vram_used_bytes = cell(c, "VRAM Total Used Memory (B)");
  r.gpu_util_pct = cell(c, "GPU use (%)");
  r.mem_util_pct = cell(c, "GPU memory use (%)");
  r.temp_edge_c = cell(c, "Temperature (Sensor edge) (C)");
  r.temp_hotspot_c = cell(c, "Temperature (Sensor junction) (C)");
  r.temp_memory_c = cell(c, "Temperature (Sensor memory) (C)");
  r.clock_gfx_mhz = cell(c, "sclk clock speed:");
  r.clock_mem_mhz = cell(c, "mclk clock speed:");
  return r;
}

}  // namespace

ParsedReadings parse_rocm_smi_json(std::string_view text) {
  ParsedReadings out;
  const char* what = "rocm-smi --json";
  auto doc = parse_doc(text, what, out.error);
  if (!doc) return out;
  for (const auto& [index, card] : cards_of(*doc, what, out.error)) out.gpus.push_back(reading_of(index, card));
  return out;
}

ParsedStatic parse_rocm_smi_json_static(std::string_view text) {
  ParsedStatic out;
  const char* what = "rocm-smi --json";
  auto doc = parse_doc(text, what, out.error);
  if (!doc) return out;
  auto cards = cards_of(*doc, what, out.error);
  if (cards.empty()) return out;
  const json* c = cards.front().second;
  GpuStatic& f = out.facts;
  f.gpu_count = static_cast<int>(cards.size());
  for (const char* key : {"Card Series", "Card series", "Device Name"})
    if (!f.model) f.model = json_text(child(c, key));
  f.vbios = json_text(child(c, "VBIOS version"));
  f.driver_version = json_text(child(child(&*doc, "system"), "Driver version"));
  f.vram_total_bytes = cell(c, "VRAM Total Memory (B)");
  return out;
}

// --- the Concise Info table ---

namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool ends_with_unit(std::string_view word, std::string_view unit) {
  return word.size() > unit.size() && word.ends_with(unit) && leading_number(word).has_value();
}

// A data row starts with the device index; the name lines and the header do not.
std::optional<int> row_index(const std::vector<std::string_view>& w) {
  if (w.size() < 6) return std::nullopt;
  int n = 0;
  auto [end, ec] = std::from_chars(w[0].data(), w[0].data() + w[0].size(), n);
  if (ec != std::errc() || end != w[0].data() + w[0].size() || n < 0) return std::nullopt;
  return n;
}

// Which sensor the "Temp" column shows, from the header's second line: "(Junction)" or "(Edge)".
enum class TempSensor { junction, edge, memory };

GpuReading concise_row(int index, const std::vector<std::string_view>& w, TempSensor sensor) {
  GpuReading r;
  r.index = index;
  std::vector<double> watts, mhz, pct;
  std::optional<double> temp;
  for (std::size_t i = 1; i < w.size(); ++i) {
    if (!temp && (ends_with_unit(w[i], "\xC2\xB0" "C") || ends_with_unit(w[i], "C"))) temp = leading_number(w[i]);
    else if (ends_with_unit(w[i], "W")) watts.push_back(*leading_number(w[i]));
    else if (ends_with_unit(w[i], "Mhz") || ends_with_unit(w[i], "MHz")) mhz.push_back(*leading_number(w[i]));
    else if (ends_with_unit(w[i], "%")) pct.push_back(*leading_number(w[i]));
  }
  // Columns in order: Power, then PwrCap; SCLK, MCLK; Fan, VRAM%, GPU% (the last two always).
  if (watts.size() >= 2) r.power_w = watts.front();
  if (mhz.size() >= 1) r.clock_gfx_mhz = mhz[0];
  if (mhz.size() >= 2) r.clock_mem_mhz = mhz[1];
  if (pct.size() >= 2) {
    r.vram_used_pct = pct[pct.size() - 2];
    r.gpu_util_pct = pct.back();
  }
  if (sensor == TempSensor::edge) r.temp_edge_c = temp;
  else if (sensor == TempSensor::memory) r.temp_memory_c = temp;
  else r.temp_hotspot_c = temp;
  return r;
}

}  // namespace

ParsedReadings parse_rocm_smi_concise(std::string_view text) {
  ParsedReadings out;
  TempSensor sensor = TempSensor::junction;
  bool header = false;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.find("(Edge)") != std::string_view::npos) sensor = TempSensor::edge;
    if (line.find("(Memory)") != std::string_view::npos) sensor = TempSensor::memory;
    if (line.starts_with("Device")) header = true;
    auto w = words(line);
    if (!header) continue;
    if (auto index = row_index(w)) {
      if (out.gpus.size() >= kMaxGpus) {
        out.gpus.clear();
        out.error = too_many_gpus("rocm-smi");
        return out;
      }
      out.gpus.push_back(concise_row(*index, w, sensor));
    }
  }
  if (out.gpus.empty())
    out.error = header ? "rocm-smi: the Concise Info table has no GPU row"
                       : "rocm-smi: no Concise Info table in the output (expected a \"Device ...\" header)";
  return out;
}

}  // namespace runara::gpu

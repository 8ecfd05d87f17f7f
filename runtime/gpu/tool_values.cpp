#include "gpu/tool_values.hpp"
#include "base/text.hpp"

#include <charconv>
#include <cmath>
#include <string>

namespace runara::gpu {

namespace {

bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// Splits "  (1402Mhz) " into the number's text and what follows it.
std::string_view number_part(std::string_view text, std::string_view* rest) {
  text = trim(text);
  if (!text.empty() && text.front() == '(') text.remove_prefix(1);
  std::size_t n = 0;
  if (n < text.size() && (text[n] == '-' || text[n] == '+')) ++n;
  while (n < text.size() && ((text[n] >= '0' && text[n] <= '9') || text[n] == '.' || text[n] == 'e' ||
                             text[n] == 'E' || ((text[n] == '-' || text[n] == '+') && n > 0 &&
                                                (text[n - 1] == 'e' || text[n - 1] == 'E'))))
    ++n;
  if (rest) *rest = text.substr(n);
  return text.substr(0, n);
}

}  // namespace

bool is_not_available(std::string_view text) {
  text = trim(text);
  if (text.empty()) return true;
  if (text.front() == '[' && text.back() == ']') return true;  // "[N/A]", "[Not Supported]", "[Requested ...]"
  return ascii_iequals(text, "N/A") || ascii_iequals(text, "NA") || ascii_iequals(text, "Not Supported");
}

std::optional<double> leading_number(std::string_view text) {
  if (is_not_available(text)) return std::nullopt;
  std::string_view rest;
  std::string_view digits = number_part(text, &rest);
  if (digits.empty() || digits.front() == '+') return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value)) return std::nullopt;
  // "0x74a1" is an id, not 0 of unit "x74a1".
  if (!rest.empty() && (rest.front() == 'x' || rest.front() == 'X')) return std::nullopt;
  // What follows must look like a unit: letters, '%', '°' bytes, '/', blanks, a closing ')'.
  for (char c : rest) {
    const auto u = static_cast<unsigned char>(c);
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '%' || c == '/' || c == ' ' ||
                    c == ')' || c == '\t' || c == '\r' || u >= 0x80;
    if (!ok) return std::nullopt;
  }
  return value;
}

std::string_view trailing_unit(std::string_view text) {
  std::string_view rest;
  number_part(text, &rest);
  rest = trim(rest);
  if (!rest.empty() && rest.back() == ')') rest.remove_suffix(1);
  return trim(rest);
}

std::optional<double> unit_factor(std::string_view unit) {
  unit = trim(unit);
  struct Scale {
    std::string_view unit;
    double factor;
  };
  static constexpr Scale kScales[] = {
      {"", 1},          {"%", 1},          {"W", 1},          {"mW", 1e-3},       {"uW", 1e-6},
      {"J", 1},         {"mJ", 1e-3},      {"uJ", 1e-6},      {"kJ", 1e3},        {"B", 1},
      {"KB", 1024.0},   {"KiB", 1024.0},   {"MB", 1048576.0}, {"MiB", 1048576.0}, {"GB", 1073741824.0},
      {"GiB", 1073741824.0}, {"C", 1},     {"\xC2\xB0" "C", 1}, {"MHz", 1},       {"Mhz", 1},
      {"GHz", 1e3},     {"mV", 1},
  };
  for (const Scale& s : kScales)
    if (s.unit == unit) return s.factor;
  return std::nullopt;
}

const nlohmann::json* child(const nlohmann::json* j, std::string_view key) {
  if (!j || !j->is_object()) return nullptr;
  auto it = j->find(key);
  return it == j->end() ? nullptr : &*it;
}

std::optional<double> json_quantity(const nlohmann::json* leaf) {
  if (!leaf) return std::nullopt;
  if (leaf->is_number()) {
    const double v = leaf->get<double>();
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
  }
  if (leaf->is_string()) {
    const auto& s = leaf->get_ref<const std::string&>();
    auto v = leading_number(s);
    if (!v) return std::nullopt;
    auto f = unit_factor(trailing_unit(s));
    return f ? std::optional<double>(*v * *f) : std::nullopt;
  }
  if (!leaf->is_object()) return std::nullopt;
  const nlohmann::json* value = child(leaf, "value");
  if (!value || value->is_object() || value->is_array()) return std::nullopt;
  auto v = json_quantity(value);
  if (!v) return std::nullopt;
  const nlohmann::json* unit = child(leaf, "unit");
  if (!unit) return v;
  if (!unit->is_string()) return std::nullopt;
  auto f = unit_factor(unit->get_ref<const std::string&>());
  return f ? std::optional<double>(*v * *f) : std::nullopt;
}

std::optional<std::string> json_text(const nlohmann::json* leaf) {
  if (!leaf) return std::nullopt;
  if (leaf->is_number_integer()) return std::to_string(leaf->get<long long>());
  if (!leaf->is_string()) return std::nullopt;
  const auto& s = leaf->get_ref<const std::string&>();
  if (is_not_available(s)) return std::nullopt;
  return std::string(trim(s));
}

}  // namespace runara::gpu

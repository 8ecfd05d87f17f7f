#include "metrics/prometheus_text.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace runara::metrics {

namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

struct Cursor {
  std::string_view s;
  std::size_t i = 0;
  bool end() const { return i >= s.size(); }
  char peek() const { return end() ? '\0' : s[i]; }
  void blanks() {
    while (!end() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  std::string_view word() {
    const std::size_t start = i;
    while (!end() && s[i] != ' ' && s[i] != '\t') ++i;
    return s.substr(start, i - start);
  }
  std::string_view name() {
    const std::size_t start = i;
    if (!end() && name_start(s[i])) ++i;
    while (!end() && name_char(s[i])) ++i;
    return s.substr(start, i - start);
  }
};

std::optional<double> number(std::string_view w) {
  if (w == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (w == "+Inf" || w == "Inf") return std::numeric_limits<double>::infinity();
  if (w == "-Inf") return -std::numeric_limits<double>::infinity();
  if (!w.empty() && w.front() == '+') w.remove_prefix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  if (ec != std::errc() || end != w.data() + w.size() || w.empty()) return std::nullopt;
  return v;
}

// A label value after its opening quote, unescaped; false when the line ends first.
bool quoted(Cursor& c, std::string& out) {
  while (!c.end()) {
    char ch = c.s[c.i++];
    if (ch == '"') return true;
    if (ch == '\\' && !c.end()) {
      ch = c.s[c.i++];
      out += ch == 'n' ? '\n' : ch;
    } else {
      out += ch;
    }
  }
  return false;
}

// Parses the `{...}` after a sample name; "" or what was wrong.
std::string labels(Cursor& c, PromSample& s) {
  ++c.i;  // '{'
  for (;;) {
    c.blanks();
    if (c.peek() == '}') {
      ++c.i;
      return {};
    }
    std::string_view key = c.name();
    if (key.empty()) return "expected a label name or '}'";
    c.blanks();
    if (c.peek() != '=') return "expected '=' after label name '" + std::string(key) + "'";
    ++c.i;
    c.blanks();
    if (c.peek() != '"') return "expected '\"' to open the value of label '" + std::string(key) + "'";
    ++c.i;
    std::string value;
    if (!quoted(c, value)) return "the value of label '" + std::string(key) + "' is not closed with '\"'";
    s.labels.emplace_back(key, std::move(value));
    c.blanks();
    if (c.peek() == ',') ++c.i;
    else if (c.peek() != '}') return "expected ',' or '}' after the value of label '" + std::string(key) + "'";
  }
}

std::string sample_line(std::string_view line, PromSample& s) {
  Cursor c{line};
  s.name = std::string(c.name());
  if (s.name.empty()) return "expected a metric name";
  c.blanks();
  if (c.peek() == '{') {
    if (std::string e = labels(c, s); !e.empty()) return e;
    c.blanks();
  }
  const std::string_view value = c.word();
  auto v = number(value);
  if (!v) return value.empty() ? "expected a value after the metric name" : "'" + std::string(value) + "' is not a number";
  s.value = *v;
  c.blanks();
  if (!c.end()) {
    const std::string_view ts = c.word();
    std::int64_t t = 0;
    auto [end, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), t);
    if (ec != std::errc() || end != ts.data() + ts.size()) return "'" + std::string(ts) + "' is not a timestamp in ms";
    s.timestamp_ms = t;
    c.blanks();
    if (!c.end()) return "unexpected text after the timestamp";
  }
  return {};
}

// "# HELP name text" / "# TYPE name type"; other comments are ignored.
std::string comment_line(std::string_view line, PromParse& p) {
  Cursor c{line};
  ++c.i;
  c.blanks();
  const std::string_view keyword = c.word();
  if (keyword != "HELP" && keyword != "TYPE") return {};
  c.blanks();
  const std::string name(c.name());
  if (name.empty()) return "expected a metric name after # " + std::string(keyword);
  c.blanks();
  std::string_view rest = line.substr(std::min(c.i, line.size()));
  PromFamily& f = p.families[name];
  if (keyword == "HELP") {
    f.help.clear();
    for (std::size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == '\\' && i + 1 < rest.size()) {
        ++i;
        f.help += rest[i] == 'n' ? '\n' : rest[i];
      } else {
        f.help += rest[i];
      }
    }
    return {};
  }
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
  for (std::string_view t : {"counter", "gauge", "histogram", "summary", "untyped", "gaugehistogram", "info",
                             "stateset", "unknown"})
    if (rest == t) {
      f.type = std::string(t);
      return {};
    }
  return "unknown metric type '" + std::string(rest.substr(0, 40)) + "' for " + name;
}

void assign_family(PromParse& p, PromSample& s) {
  for (std::string_view suffix : {"_bucket", "_sum", "_count", "_created"}) {
    if (s.name.size() <= suffix.size() || !std::string_view(s.name).ends_with(suffix)) continue;
    const std::string base = s.name.substr(0, s.name.size() - suffix.size());
    auto it = p.families.find(base);
    if (it != p.families.end() && it->second.type != "untyped") {
      s.family = base;
      return;
    }
  }
  s.family = s.name;
  p.families.try_emplace(s.name);
}

// The heap a string holds beyond its own object (none while it fits inline).
std::size_t heap_of(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

// What one sample holds in the parse: the object (twice: the vector's spare room), its strings,
// its label pairs.
std::size_t sample_bytes(const PromSample& s) {
  std::size_t n = 2 * sizeof(PromSample) + heap_of(s.name) + heap_of(s.family) +
                  s.labels.capacity() * sizeof(std::pair<std::string, std::string>);
  for (const auto& [k, v] : s.labels) n += heap_of(k) + heap_of(v);
  return n;
}

// One family's map node without its name's and help's heap: the tree links, the pair.
constexpr std::size_t kFamilyNodeBytes = 4 * sizeof(void*) + sizeof(std::pair<const std::string, PromFamily>);

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

std::string excerpt(std::string_view line) {
  constexpr std::size_t kMax = 80;
  return "\"" + std::string(line.substr(0, kMax)) + (line.size() > kMax ? "...\"" : "\"");
}

}  // namespace

PromParse parse_prometheus_text(std::string_view text) {
  PromParse p;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t lead = 0;
    while (lead < line.size() && (line[lead] == ' ' || line[lead] == '\t')) ++lead;
    line.remove_prefix(lead);
    if (line.empty()) continue;
    std::string error;
    const std::size_t families = p.families.size();
    if (line.size() > kMaxLine) {
      error = "longer than " + std::to_string(kMaxLine) + " bytes";
    } else if (line.front() == '#') {
      error = comment_line(line, p);
      if (error.empty()) p.bytes += line.size();  // at most what a HELP text and a name hold (a repeat counts again)
    } else if (p.samples.size() >= kMaxSamples) {
      error = "more than " + std::to_string(kMaxSamples) + " samples";
    } else {
      PromSample s;
      error = sample_line(line, s);
      if (error.empty()) {
        assign_family(p, s);
        p.bytes += sample_bytes(s);
        p.samples.push_back(std::move(s));
      }
    }
    if (error.empty() && p.families.size() > families) {  // a new family (one line makes at most one)
      p.bytes += kFamilyNodeBytes + line.size();  // its name is at most the line
    }
    if (error.empty() && p.families.size() > kMaxFamilies) {
      error = "more than " + std::to_string(kMaxFamilies) + " metric families";
    }
    if (error.empty() && p.bytes > kMaxParsedBytes) {
      error = "the parsed samples would take more than " + mib(kMaxParsedBytes) + " (" +
              std::to_string(p.samples.size()) + " samples, " + std::to_string(p.families.size()) + " families)";
    }
    if (!error.empty()) {
      p.bytes = 0;
      p.samples.clear();
      p.families.clear();
      p.error = "metrics text line " + std::to_string(number) + ": " + error + ": " + excerpt(line);
      return p;
    }
  }
  return p;
}

std::map<std::string, double> prometheus_totals(const PromParse& p) {
  std::map<std::string, double> out;
  for (const PromSample& s : p.samples) {
    const auto f = p.families.find(s.family);
    const std::string& type = f == p.families.end() ? std::string() : f->second.type;
    if (type == "histogram" && s.name.ends_with("_bucket")) continue;
    bool quantile = false;
    for (const auto& [k, v] : s.labels) quantile = quantile || (type == "summary" && k == "quantile");
    if (quantile) continue;
    out[s.name] += s.value;
  }
  return out;
}

}  // namespace runara::metrics

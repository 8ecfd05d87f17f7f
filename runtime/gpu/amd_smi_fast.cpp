#include "gpu/amd_smi_fast.hpp"

#include <charconv>
#include <cmath>
#include <cstring>

#include "gpu/tool_values.hpp"
#include "base/json_limits.hpp"

namespace runara::gpu {

namespace {

// Thrown nowhere: every failure sets `bail` and unwinds through return values.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : p_(s.data()), end_(s.data() + s.size()) {}
  bool bail = false;

  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool at_end() {
    ws();
    return p_ == end_;
  }
  char peek() {
    ws();
    return p_ < end_ ? *p_ : '\0';
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++p_;
    return true;
  }
  bool fail() {
    bail = true;
    return false;
  }

  // A string's bytes between the quotes. `plain`: false when it holds an escape (still skipped
  // correctly). Non-ASCII and control bytes bail: the reference's UTF-8 checks are not redone.
  bool string(std::string_view& out, bool& plain) {
    if (!eat('"')) return fail();
    const char* start = p_;
    plain = true;
    while (p_ < end_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out = std::string_view(start, static_cast<std::size_t>(p_ - start));
        ++p_;
        return true;
      }
      if (c < 0x20 || c >= 0x80) return fail();
      if (c == '\\') {
        plain = false;
        if (++p_ >= end_) return fail();
        const char e = *p_;
        if (e == 'u') {
          for (int i = 0; i < 4; ++i)
            if (++p_ >= end_ || !std::isxdigit(static_cast<unsigned char>(*p_))) return fail();
        } else if (!std::strchr("\"\\/bfnrt", e) || e == '\0') {
          return fail();
        }
      }
      ++p_;
    }
    return fail();
  }

  // A JSON number; `integer`: it has no fraction or exponent.
  bool number(double& v, bool& integer) {
    ws();
    const char* s = p_;
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ >= end_ || !std::isdigit(static_cast<unsigned char>(*p_))) return fail();
    if (*p_ == '0') ++p_;
    else while (p_ < end_ && std::isdigit(static_cast<unsigned char>(*p_))) ++p_;
    integer = true;
    if (p_ < end_ && *p_ == '.') {
      integer = false;
      ++p_;
      if (p_ >= end_ || !std::isdigit(static_cast<unsigned char>(*p_))) return fail();
      while (p_ < end_ && std::isdigit(static_cast<unsigned char>(*p_))) ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ >= end_ || !std::isdigit(static_cast<unsigned char>(*p_))) return fail();
      while (p_ < end_ && std::isdigit(static_cast<unsigned char>(*p_))) ++p_;
    }
    auto [ptr, ec] = std::from_chars(s, p_, v);
    if (ec != std::errc() || ptr != p_ || !std::isfinite(v)) return fail();
    return true;
  }

  bool literal() {
    for (const char* word : {"true", "false", "null"}) {
      const std::size_t n = std::strlen(word);
      if (static_cast<std::size_t>(end_ - p_) >= n && std::memcmp(p_, word, n) == 0) {
        p_ += n;
        return true;
      }
    }
    return fail();
  }

  // Any value, checked but not kept.
  bool skip(int depth) {
    if (depth > kMaxJsonDepth) return fail();
    const char c = peek();
    if (c == '"') {
      std::string_view s;
      bool plain;
      return string(s, plain);
    }
    if (c == '{') return members(depth, [&](std::string_view) { return skip(depth + 1); });
    if (c == '[') return elements(depth, [&](int) { return skip(depth + 1); });
    if (c == '-' || (c >= '0' && c <= '9')) {
      double v;
      bool i;
      return number(v, i);
    }
    return literal();
  }

  // `{ "key": value, ... }`: each() reads the value after the colon. Keys with escapes bail.
  template <class Each>
  bool members(int depth, Each each) {
    if (depth > kMaxJsonDepth || !eat('{')) return fail();
    if (eat('}')) return true;
    for (;;) {
      std::string_view key;
      bool plain;
      if (!string(key, plain) || !plain) return fail();
      if (!eat(':') || !each(key) || bail) return fail();
      if (eat('}')) return true;
      if (!eat(',')) return fail();
    }
  }

  template <class Each>
  bool elements(int depth, Each each) {
    if (depth > kMaxJsonDepth || !eat('[')) return fail();
    if (eat(']')) return true;
    for (int i = 0;; ++i) {
      if (!each(i) || bail) return fail();
      if (eat(']')) return true;
      if (!eat(',')) return fail();
    }
  }

  // A quantity leaf as json_quantity reads it: number, string, or {"value", "unit"}.
  bool quantity(int depth, std::optional<double>& out) {
    out.reset();
    const char c = peek();
    if (c == '-' || (c >= '0' && c <= '9')) {
      double v;
      bool i;
      if (!number(v, i)) return false;
      out = v;
      return true;
    }
    if (c == '"') return text_quantity(out);
    if (c != '{') return skip(depth);
    // {value, unit}: the last of each key wins, as in the reference's document.
    std::optional<double> value;
    bool value_ok = false, has_value = false, has_unit = false, unit_ok = false;
    std::string_view unit;
    bool fine = members(depth, [&](std::string_view key) {
      if (key == "value") {
        has_value = true;
        const char v = peek();
        value_ok = v == '"' || v == '-' || (v >= '0' && v <= '9');
        if (value_ok) return quantity(depth + 1, value);
        value.reset();
        return skip(depth + 1);
      }
      if (key == "unit") {
        has_unit = true;
        unit_ok = peek() == '"';
        if (!unit_ok) return skip(depth + 1);
        bool plain;
        return string(unit, plain) && (plain || fail());
      }
      return skip(depth + 1);
    });
    if (!fine) return false;
    if (!has_value || !value_ok || !value) return true;
    if (!has_unit) {
      out = value;
      return true;
    }
    if (!unit_ok) return true;
    if (auto f = unit_factor(unit)) out = *value * *f;
    return true;
  }

  bool text_quantity(std::optional<double>& out) {
    std::string_view s;
    bool plain;
    if (!string(s, plain)) return false;
    if (!plain) return fail();  // the reference would read the unescaped text
    auto v = leading_number(s);
    if (!v) return true;
    if (auto f = unit_factor(trailing_unit(s))) out = *v * *f;
    return true;
  }

 private:
  const char* p_;
  const char* end_;
};

struct Sections {
  std::optional<double> socket, current, average;  // power
  std::optional<double> energy, used, total, gfx, umc, edge, hotspot, mem;
  bool gfx0 = false, gfx_plain = false, mem0 = false, mem_plain = false;
  std::optional<double> clk_gfx0, clk_gfx, clk_mem0, clk_mem;
};

// An object section whose named keys hold quantities; a non-object resets them (as a reference
// lookup into a non-object finds nothing).
template <std::size_t N>
bool section(Scanner& sc, int depth, const std::string_view (&keys)[N], std::optional<double>* (&slots)[N]) {
  for (auto* s : slots) s->reset();
  if (sc.peek() != '{') return sc.skip(depth);
  return sc.members(depth, [&](std::string_view key) {
    for (std::size_t i = 0; i < N; ++i)
      if (key == keys[i]) return sc.quantity(depth + 1, *slots[i]);
    return sc.skip(depth + 1);
  });
}

// The clock section: gfx_0 / gfx / mem_0 / mem objects holding "clk".
bool clocks(Scanner& sc, int depth, Sections& s) {
  s.gfx0 = s.gfx_plain = s.mem0 = s.mem_plain = false;
  s.clk_gfx0.reset(), s.clk_gfx.reset(), s.clk_mem0.reset(), s.clk_mem.reset();
  if (sc.peek() != '{') return sc.skip(depth);
  return sc.members(depth, [&](std::string_view key) {
    bool* present = key == "gfx_0" ? &s.gfx0 : key == "gfx" ? &s.gfx_plain : key == "mem_0" ? &s.mem0 : key == "mem" ? &s.mem_plain : nullptr;
    std::optional<double>* clk = key == "gfx_0" ? &s.clk_gfx0 : key == "gfx" ? &s.clk_gfx : key == "mem_0" ? &s.clk_mem0 : key == "mem" ? &s.clk_mem : nullptr;
    if (!present) return sc.skip(depth + 1);
    *present = true;
    clk->reset();
    if (sc.peek() != '{') return sc.skip(depth + 1);
    return sc.members(depth + 1, [&](std::string_view k) { return k == "clk" ? sc.quantity(depth + 2, *clk) : sc.skip(depth + 2); });
  });
}

bool gpu_entry(Scanner& sc, int depth, int position, GpuReading& r) {
  Sections s;
  int index = position;  // a plain int: GCC 12 warns falsely about optional<int> here
  bool ok = sc.members(depth, [&](std::string_view key) {
    if (key == "gpu") {
      index = position;
      const char c = sc.peek();
      if (c != '-' && (c < '0' || c > '9')) return sc.skip(depth + 1);
      double v;
      bool integer;
      if (!sc.number(v, integer)) return false;
      if (integer) {
        if (v < -2147483648.0 || v > 2147483647.0) return sc.fail();
        index = static_cast<int>(v);
      }
      return true;
    }
    if (key == "power") {
      static constexpr std::string_view k[] = {"socket_power", "current_socket_power", "average_socket_power"};
      std::optional<double>* slots[] = {&s.socket, &s.current, &s.average};
      return section(sc, depth + 1, k, slots);
    }
    if (key == "energy") {
      static constexpr std::string_view k[] = {"total_energy_consumption"};
      std::optional<double>* slots[] = {&s.energy};
      return section(sc, depth + 1, k, slots);
    }
    if (key == "mem_usage") {
      static constexpr std::string_view k[] = {"used_vram", "total_vram"};
      std::optional<double>* slots[] = {&s.used, &s.total};
      return section(sc, depth + 1, k, slots);
    }
    if (key == "usage") {
      static constexpr std::string_view k[] = {"gfx_activity", "umc_activity"};
      std::optional<double>* slots[] = {&s.gfx, &s.umc};
      return section(sc, depth + 1, k, slots);
    }
    if (key == "temperature") {
      static constexpr std::string_view k[] = {"edge", "hotspot", "mem"};
      std::optional<double>* slots[] = {&s.edge, &s.hotspot, &s.mem};
      return section(sc, depth + 1, k, slots);
    }
    if (key == "clock") return clocks(sc, depth + 1, s);
    return sc.skip(depth + 1);
  });
  if (!ok) return false;
  r = GpuReading{};
  r.index = index;
  r.power_w = s.socket ? s.socket : s.current ? s.current : s.average;
  r.energy_j = s.energy;
  r.vram_used_bytes = s.used;
  r.vram_total_bytes = s.total;
  r.gpu_util_pct = s.gfx;
  r.mem_util_pct = s.umc;
  r.temp_edge_c = s.edge;
  r.temp_hotspot_c = s.hotspot;
  r.temp_memory_c = s.mem;
  r.clock_gfx_mhz = s.gfx0 ? s.clk_gfx0 : s.clk_gfx;
  r.clock_mem_mhz = s.mem0 ? s.clk_mem0 : s.clk_mem;
  return true;
}

bool gpu_list(Scanner& sc, int depth, ParsedReadings& out) {
  out.gpus.clear();
  return sc.elements(depth, [&](int i) {
    if (sc.peek() != '{') return sc.fail();  // the reference reports it as an error
    if (out.gpus.size() >= kMaxGpus) return sc.fail();  // so does it too many GPUs
    GpuReading r;
    if (!gpu_entry(sc, depth + 1, i, r)) return false;
    out.gpus.push_back(r);
    return true;
  });
}

}  // namespace

std::optional<ParsedReadings> parse_amd_smi_metric_fast(std::string_view text) {
  Scanner sc(text);
  ParsedReadings out;
  const char first = sc.peek();
  bool ok = false;
  if (first == '[') {
    ok = gpu_list(sc, 1, out);
  } else if (first == '{') {
    bool seen = false;
    ok = sc.members(1, [&](std::string_view key) {
      if (key != "gpu_data") return sc.skip(2);
      if (seen || sc.peek() != '[') return sc.fail();
      seen = true;
      return gpu_list(sc, 2, out);
    });
    ok = ok && seen;
  }
  if (!ok || sc.bail || !sc.at_end() || out.gpus.empty()) return std::nullopt;
  return out;
}

}  // namespace runara::gpu

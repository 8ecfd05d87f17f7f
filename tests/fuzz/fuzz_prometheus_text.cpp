// libFuzzer target for the Prometheus text parser (runtime/metrics/prometheus_text.*).
//
// Built by CMake (tests/fuzz/CMakeLists.txt): a libFuzzer binary with clang, a replay of
// seeds and mutations under GCC (ctest runs it); see tests/fuzz/README.md.
//
// What one input checks: no crash; a failed parse keeps nothing and names a line; every sample
// has a name and a family the family map knows; the text parsed again after re-joining its
// lines with "\r\n" gives the same samples (line ends do not matter).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "metrics/prometheus_text.hpp"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "MISMATCH: %s\n", what);
  std::abort();
}

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto p = runara::metrics::parse_prometheus_text(text);
  if (!p.error.empty()) {
    if (!p.samples.empty() || !p.families.empty()) fail("a failed parse kept samples");
    if (p.error.rfind("metrics text line ", 0) != 0) fail("error does not name a line");
    return 0;
  }
  for (const auto& s : p.samples) {
    if (s.name.empty()) fail("empty sample name");
    if (!p.families.count(s.family)) fail("sample family unknown");
  }
  if (text.find('\r') != std::string::npos) return 0;
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const auto q = runara::metrics::parse_prometheus_text(crlf);
  if (!q.error.empty() || q.samples.size() != p.samples.size()) fail("CRLF changes the parse");
  for (std::size_t i = 0; i < p.samples.size(); ++i)
    if (q.samples[i].name != p.samples[i].name || q.samples[i].labels != p.samples[i].labels ||
        !same_value(q.samples[i].value, p.samples[i].value))
      fail("CRLF changes a sample");
  (void)runara::metrics::prometheus_totals(p);
  return 0;
}

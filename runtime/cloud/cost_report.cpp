#include "cloud/cost_report.hpp"

#include <cmath>
#include <cstdio>

namespace runara {

namespace {
double printed_value(double usd) { return std::round(usd * 1e4) / 1e4; }
}  // namespace

std::string format_cost(double usd) {
  char text[40];
  std::snprintf(text, sizeof text, "$%.4f", printed_value(usd));
  return text;
}

std::vector<std::string> cost_report(const std::vector<std::pair<std::string, double>>& parts) {
  std::vector<std::string> lines;
  double total = 0;
  for (const auto& [label, usd] : parts) {
    total += printed_value(usd);
    lines.push_back(label + ", cost " + format_cost(usd));
  }
  if (!parts.empty()) lines.push_back("machines of this run cost " + format_cost(total) + " in all");
  return lines;
}

}  // namespace runara

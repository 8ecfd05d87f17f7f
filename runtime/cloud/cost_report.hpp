// The lines a run prints about what its machines cost, so that the printed figures add up.
//
// Contract. Pure formatting, any thread. Each part is printed to a tenth of a cent and the total
// is the sum of the printed parts (two machines at $0.0040 total $0.0080, never a surprise
// $0.01 beside two $0.00); the exact, unrounded figures are in results.json's `run` section.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace runara {

// "$0.0036": four decimals, for costs that are printed and added up.
std::string format_cost(double usd);

// One line per (label, dollars) part ("LABEL, cost $0.0036"), then, when there are parts,
// "machines of this run cost $X in all" where X is the sum of the printed parts.
std::vector<std::string> cost_report(const std::vector<std::pair<std::string, double>>& parts);

}  // namespace runara

#include "base/did_you_mean.hpp"

#include <algorithm>

namespace runara {

namespace {

// Levenshtein distance with adjacent transpositions counted as one edit (optimal string
// alignment): "szie" is one slip from "size", not two.
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest_name(std::string_view given, const std::vector<std::string>& known) {
  if (given.empty() || given.size() > 64) return {};  // no quadratic work on a hostile key
  const std::size_t allowed = std::clamp<std::size_t>(given.size() / 3, 1, 3);
  std::string best;
  std::size_t best_distance = allowed + 1;
  for (const auto& name : known) {
    const std::size_t d = distance(given, name);
    if (d < best_distance) best = name, best_distance = d;
  }
  return best;
}

std::string did_you_mean(std::string_view given, const std::vector<std::string>& known) {
  const std::string name = closest_name(given, known);
  return name.empty() ? std::string() : " (did you mean '" + name + "'?)";
}

}  // namespace runara

// Redaction of secret values (runtime/guards/secrets.*): what it masks, that the masked text keeps the
// value's length, and that its cost does not depend on the secret's bytes (a script can time
// print(), and a cost that depends on the value is an oracle: see docs/permissions.md).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "guards/secrets.hpp"

namespace {

using runara::Secrets;

// Best of several timings of redact() on each text, taken in turns so that a burst of load
// from other processes on a busy machine hits every text alike; the minimum is what the work
// costs, since noise only ever adds.
std::vector<double> best_seconds(const Secrets& secrets, const std::vector<std::string>& texts) {
  std::vector<double> best(texts.size(), 1e9);
  for (int round = 0; round < 9; ++round) {
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      const std::string out = secrets.redact(texts[i]);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      REQUIRE(out.size() == texts[i].size());
      best[i] = std::min(best[i], took.count());
    }
  }
  return best;
}

// The plain search-and-replace redaction means: left to right, occurrences not overlapping,
// one secret after the other (in name order, as Secrets keeps them).
std::string reference_redact(std::string text, const std::vector<std::pair<std::string, std::string>>& secrets) {
  for (const auto& [name, value] : secrets) {
    const std::string mask = Secrets::mask_for(name, value.size());
    for (std::size_t pos = text.find(value); pos != std::string::npos; pos = text.find(value, pos + value.size())) {
      text.replace(pos, value.size(), mask);
    }
  }
  return text;
}

}  // namespace

TEST_CASE("redaction masks every occurrence with a mask of the value's own length", "[secrets]") {
  Secrets secrets;
  secrets.add("API_KEY", "tok-1234567890-abcdefghijklmnopq");  // longer than "<secret API_KEY>"
  secrets.add("PIN", "482913");                              // shorter than "<secret PIN>"
  const std::string text = "a tok-1234567890-abcdefghijklmnopq b 482913 c 482913482913 d 48291";
  const std::string out = secrets.redact(text);
  INFO(out);
  CHECK(out.size() == text.size());
  CHECK(out.find("tok-") == std::string::npos);
  CHECK(out.find("482913") == std::string::npos);
  CHECK(out.find("<secret API_KEY") == 2);
  CHECK(out.find(" 48291") != std::string::npos);  // a near miss is left alone
  CHECK(out.substr(out.size() - 6) == " 48291");
  CHECK(secrets.redact("nothing here") == "nothing here");
}

TEST_CASE("redaction takes as long whatever the text's bytes (no first-byte timing oracle)", "[secrets]") {
  // Before: std::string::find skips with memchr to the secret's first byte, so a text made of
  // that byte took ~800x longer to redact (25 ms against 0.03 ms a MiB), and a script timing
  // print() learned the first byte, then the next. The bound (3x) is loose enough for a busy
  // machine and far below what the old code showed.
  Secrets secrets;
  secrets.add("RUNARA_TEST_SECRET", "hunter2-runara-redaction-timing");
  const std::size_t n = 1 << 20;
  std::string prefixes;
  while (prefixes.size() < n) prefixes += "hunter2-runara-";
  prefixes.resize(n);
  const auto best = best_seconds(secrets, {std::string(n, 'h'), prefixes, std::string(n, 'x')});
  const double same_first = best[0], prefix = best[1], other = best[2];
  INFO("1 MiB of 'h': " << same_first * 1e3 << " ms, of a 15-byte prefix: " << prefix * 1e3
                        << " ms, of 'x': " << other * 1e3 << " ms");
  CHECK(same_first < 3 * other);
  CHECK(other < 3 * same_first);
  CHECK(prefix < 3 * other);
  CHECK(other < 3 * prefix);
}

TEST_CASE("redaction masks exactly what a plain search-and-replace would", "[secrets]") {
  // Small alphabet, short values with self-overlaps ("aba" in "ababa"), many random texts.
  const std::vector<std::pair<std::string, std::string>> values{{"A", "aba"}, {"B", "bb"}, {"C", "abcabcab"}, {"D", "c"}};
  Secrets secrets;
  for (const auto& [name, value] : values) secrets.add(name, value);
  std::mt19937 rng(12345);
  for (int round = 0; round < 2000; ++round) {
    std::string text(rng() % 40, 'a');
    for (char& c : text) c = "abc"[rng() % 3];
    INFO("text: " << text);
    CHECK(secrets.redact(text) == reference_redact(text, values));
  }
}

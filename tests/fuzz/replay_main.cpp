// The fuzz targets' driver where libFuzzer is not available (GCC, the CI build): it feeds
// LLVMFuzzerTestOneInput the seed files it is given, then `--runs N` inputs made from them by
// random mutations (fixed random seed, so a failure reproduces). Not a coverage-guided fuzzer:
// it keeps the targets built and their checks exercised in every test run, so they cannot rot;
// the real search is the clang/libFuzzer build (tests/fuzz/README.md).
//
//   fuzz_json_limits --runs 20000 --max-len 4096 tests/fixtures/...   (files or folders)
//   fuzz_json_limits --only 1234 ...                                   one input, to debug it
// A failing check aborts; the message then names the input to rerun with --only.
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// Bytes that open, close or separate something in the formats the targets parse.
const char* const kTokens[] = {"\n", "\r\n", "{", "}", "[", "]", "\"", ":", ",", "data: ", "\\u", "0", "-1e999",
                               "null", "# ", " ", "\t", "\xff", "\xc3\xa9", "\0", "[DONE]", "http://", "%", "@"};

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void add_seeds(const std::string& arg, std::vector<std::string>& seeds) {
  if (std::filesystem::is_directory(arg)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(arg))
      if (entry.is_regular_file()) seeds.push_back(read_all(entry.path()));
  } else {
    seeds.push_back(read_all(arg));
  }
}

// One to eight edits of a seed: flip, insert, delete, duplicate, or splice in a token or
// another seed's part.
std::string mutate(const std::vector<std::string>& seeds, std::mt19937_64& rng, std::size_t max_len) {
  auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  std::string s = seeds.empty() ? std::string() : seeds[pick(seeds.size())];
  const int edits = 1 + static_cast<int>(pick(8));
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = pick(s.size() + 1);
    switch (pick(6)) {
      case 0:
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1:
        s.insert(at, 1, static_cast<char>(rng()));
        break;
      case 2:
        s.erase(at, pick(16) + 1);
        break;
      case 3:
        if (!s.empty()) s.insert(at, s.substr(pick(s.size()), pick(64) + 1));
        break;
      case 4: {
        const char* token = kTokens[pick(sizeof kTokens / sizeof kTokens[0])];
        s.insert(at, token, std::max<std::size_t>(1, std::strlen(token)));
        break;
      }
      default:
        if (!seeds.empty()) {
          const std::string& other = seeds[pick(seeds.size())];
          s.insert(at, other.substr(pick(other.size() + 1), pick(256)));
        }
    }
  }
  if (s.size() > max_len) s.resize(max_len);
  return s;
}

// Which input is running, for the message when a check aborts (or a sanitizer does).
volatile long g_input = -1;

void say_which(int sig) {
  char text[96];
  const int n = std::snprintf(text, sizeof text, "\nthe failing input: mutated input %ld (rerun with --only %ld)\n",
                              static_cast<long>(g_input), static_cast<long>(g_input));
  if (n > 0) (void)!::write(2, text, static_cast<std::size_t>(n));
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

int run(const std::string& input) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  long runs = 10000;
  long only = -1;
  std::size_t max_len = 4096;
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) runs = std::atol(argv[++i]);
    else if (arg == "--only" && i + 1 < argc) only = std::atol(argv[++i]);
    else if (arg == "--max-len" && i + 1 < argc) max_len = static_cast<std::size_t>(std::atol(argv[++i]));
    else add_seeds(arg, seeds);
  }
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::signal(sig, say_which);
  for (const std::string& seed : seeds) run(seed.substr(0, max_len));
  std::mt19937_64 rng(20261124);
  for (long i = 0; i < runs; ++i) {
    const std::string input = mutate(seeds, rng, max_len);
    if (only >= 0 && i != only) continue;
    if (only >= 0) std::fprintf(stderr, "input %ld: %zu bytes\n", i, input.size());
    g_input = i;
    run(input);
  }
  std::printf("%zu seed(s) and %ld mutated input(s): every check held\n", seeds.size(), runs);
  return 0;
}

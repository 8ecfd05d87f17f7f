#include "bench_command.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cloud/droplet_fleet.hpp"
#include "cloud/reaper.hpp"
#include "did_you_mean.hpp"
#include "load/target_url.hpp"
#include "runara/runtime.hpp"
#include "signals.hpp"
#include "terminal_events.hpp"

namespace runara::cli {

namespace {

const char* const kUsage =
    "usage: runara bench URL --model M [-c 1,8,32 | --rate R[,R...] | --saturate] [-d 60s | -n N]\n"
    "                    [--input-len N] [--output-len N] [--slo-ttft-ms MS] [--slo-tpot-ms MS]\n"
    "                    [--tokenizer tokenizer.json] [--seed N] [--out DIR] [--max-runtime S] [--quiet]\n"
    "  Runs http_load against an OpenAI-compatible server (URL as in `vllm bench serve --base-url`)\n"
    "  and prints vLLM's summary (a sweep: one row per point). The URL's host and port are granted\n"
    "  by being named; nothing else is. Defaults: -c 1, -d 60s, --input-len 1024, --output-len 128.\n"
    "  --saturate doubles the concurrency from 1 until throughput grows < 10 % or the SLO breaks.\n"
    "  --tokenizer: the model's Hugging Face tokenizer.json; prompt lengths are then in its tokens.\n"
    "  Flags take their value as --flag V or --flag=V. See docs/cli.md#runara-bench.\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "runara bench: %s\n%s", message.c_str(), kUsage);
  return static_cast<int>(Exit::usage);
}

bool is_number(const std::string& text, bool whole) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && std::isfinite(v) && v > 0 && (!whole || v == std::floor(v));
}

bool is_list(const std::string& text, bool whole) {
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    if (!is_number(text.substr(start, comma - start), whole)) return false;
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

// flag -> (param name, what it expects; "" for a switch, "list"/"whole list" for lists)
struct Flag {
  const char* param;
  const char* expects;
};

const std::map<std::string, Flag>& flags() {
  static const std::map<std::string, Flag> table{
      {"--model", {"model", "a model name"}},
      {"-c", {"concurrency", "whole list"}},
      {"--concurrency", {"concurrency", "whole list"}},
      {"--rate", {"rate", "list"}},
      {"-d", {"duration", "duration"}},
      {"--duration", {"duration", "duration"}},
      {"-n", {"requests", "whole"}},
      {"--num-prompts", {"requests", "whole"}},
      {"--input-len", {"input_len", "whole"}},
      {"--output-len", {"output_len", "whole"}},
      {"--slo-ttft-ms", {"slo_ttft_ms", "number"}},
      {"--slo-tpot-ms", {"slo_tpot_ms", "number"}},
      {"--seed", {"seed", "whole"}},
      {"--saturate", {"saturate", ""}},
      {"--quiet", {"", ""}},
      {"--out", {"", "a folder"}},
      {"--max-runtime", {"", "number"}},
      {"--tokenizer", {"tokenizer", "a file"}},
  };
  return table;
}

std::vector<std::string> flag_names() {
  std::vector<std::string> names{"--help"};
  for (const auto& [name, flag] : flags()) names.push_back(name);
  return names;
}

// "" when `value` suits `expects`, else the usage error. Durations become seconds.
std::string check_value(const std::string& flag, const std::string& expects, std::string& value) {
  std::string want;
  if (expects == "whole list" && !is_list(value, true)) want = "whole numbers > 0 separated by commas, such as 1,8,32";
  if (expects == "list" && !is_list(value, false)) want = "numbers > 0 separated by commas";
  if (expects == "whole" && !is_number(value, true)) want = "a whole number > 0";
  if (expects == "number" && !is_number(value, false)) want = "a number > 0";
  if (expects == "duration") {
    const double seconds = parse_duration(value);
    if (!(seconds > 0)) want = "a duration such as 60s, 5m or 90";
    else value = std::to_string(seconds);
  }
  if (value.empty() && want.empty()) want = "a value";
  return want.empty() ? "" : flag + " expects " + want + ", got '" + value + "'";
}

std::string default_out() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  return std::string("results/") + stamp + "-bench";
}

}  // namespace

int bench_command(int argc, char** argv) {
  Options options;
  std::map<std::string, std::string> params;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a.empty() || a[0] != '-') {
      if (params.count("url")) return usage_error("one URL only, got '" + params["url"] + "' and '" + a + "'");
      std::string error;
      const auto url = parse_target_url(a, error);
      if (!url) return usage_error("URL " + error);
      options.permissions.hosts.push_back(url->host + ":" + std::to_string(url->port));
      params["url"] = a;
      continue;
    }
    std::optional<std::string> value;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
    }
    const auto it = flags().find(a);
    if (it == flags().end()) return usage_error("unknown option '" + a + "'" + did_you_mean(a, flag_names()));
    const std::string expects = it->second.expects;
    if (expects.empty()) {
      if (value) return usage_error(a + " takes no value, got '" + argv[i] + "'");
      if (a == "--quiet") options.quiet = true;
      else params[it->second.param] = "1";
      continue;
    }
    if (!value) {
      if (i + 1 >= argc) return usage_error(a + " needs a value");
      value = argv[++i];
    }
    if (std::string error = check_value(a, expects, *value); !error.empty()) return usage_error(error);
    if (a == "--tokenizer") options.permissions.read_paths.push_back(*value);  // the one file read
    if (a == "--out") options.out_dir = *value;
    else if (a == "--max-runtime") options.max_runtime_s = std::strtod(value->c_str(), nullptr);
    else params[it->second.param] = *value;
  }
  if (!params.count("url")) return usage_error("a URL is required (the server's base URL, e.g. http://10.0.0.5:8000)");
  if (!params.count("model")) return usage_error("--model is required (the served model's name, as /v1/models lists it)");
  const int modes = static_cast<int>(params.count("concurrency") + params.count("rate") + params.count("saturate"));
  if (modes > 1) return usage_error("-c, --rate and --saturate are alternatives: give one");
  if (params.count("duration") && params.count("requests")) return usage_error("-d and -n are alternatives: give one");
  if (options.out_dir.empty()) options.out_dir = default_out();
  for (const auto& [key, value] : params) options.args.push_back(key + "=" + value);
  options.history_dir = default_state_dir();
  options.history_name = "runara bench";

  Runtime runtime(options, terminal_events());
  install_signal_handlers(runtime);
  return report_outcome(runtime.run_string("require('runara_bench').run(runara.params)", "=(runara bench)"));
}

}  // namespace runara::cli

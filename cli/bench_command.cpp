#include "bench_command.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "cloud/droplet_fleet.hpp"
#include "cloud/reaper.hpp"
#include "load_job/target_url.hpp"
#include "runara/runtime.hpp"
#include "command_line.hpp"
#include "signals.hpp"
#include "terminal_events.hpp"
#include "sim/fake_server_primitive.hpp"

namespace runara::cli {

namespace {

const char* const kUsage =
    "usage: runara bench URL [--model M] [-c 1,8,32 | --rate R[,R...] | --saturate] [-d 60s | -n N]\n"
    "                    [--input-len N] [--output-len N] [--slo-ttft-ms MS] [--slo-tpot-ms MS]\n"
    "                    [--tokenizer tokenizer.json] [--seed N] [--out DIR] [--max-runtime S] [--quiet]\n"
    "  Runs http_load against an OpenAI-compatible server (URL as in `vllm bench serve --base-url`)\n"
    "  and prints vLLM's summary (a sweep: one row per point). The URL's host and port are granted\n"
    "  by being named; nothing else is. Defaults: -c 1, -d 60s, --input-len 1024, --output-len 128,\n"
    "  --model the first model the server's /v1/models lists.\n"
    "  --saturate doubles the concurrency from 1 until throughput grows < 10 % or the SLO breaks.\n"
    "  --tokenizer: the model's Hugging Face tokenizer.json; prompt lengths are then in its tokens.\n"
    "  vllm bench serve's own flags work too: --base-url, --request-rate (inf), --max-concurrency,\n"
    "  --burstiness, --num-prompts, --num-warmups, --dataset-name random|prefix_repetition|sharegpt|custom,\n"
    "  --dataset-path, --random-input-len, --random-output-len, --random-range-ratio,\n"
    "  --prefix-repetition-prefix-len/-suffix-len/-num-prefixes/-output-len,\n"
    "  --sharegpt-output-len (else each ShareGPT reply's length is its request's), --goodput\n"
    "  ttft:MS tpot:MS e2el:MS, --percentile-metrics, --metric-percentiles, --ramp-up-strategy\n"
    "  linear|exponential with --ramp-up-start-rps/--ramp-up-end-rps, --backend/--endpoint (chat),\n"
    "  --api-key (a secret: masked, sent to URL only), --temperature, --result-dir, --save-result,\n"
    "  --label NAME (the loads' name), --metadata KEY=VALUE... (at the top level of each load's\n"
    "  results.json, as vLLM), --save-detailed (each load's results.json gets vLLM's per-request\n"
    "  ttfts, itls, generated_texts, errors).\n"
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
      {"--label", {"label", "a label"}},
      {"--metadata", {"metadata", "metadata"}},
      {"-c", {"concurrency", "whole list"}},
      {"--concurrency", {"concurrency", "whole list"}},
      {"--max-concurrency", {"max_concurrency", "whole list"}},
      {"--rate", {"rate", "list"}},
      {"--request-rate", {"rate", "rate list"}},
      {"--burstiness", {"burstiness", "number"}},
      {"-d", {"duration", "duration"}},
      {"--duration", {"duration", "duration"}},
      {"-n", {"requests", "whole"}},
      {"--num-prompts", {"requests", "whole"}},
      {"--num-warmups", {"warmup", "whole or 0"}},
      {"--input-len", {"input_len", "whole"}},
      {"--random-input-len", {"input_len", "whole"}},
      {"--output-len", {"output_len", "whole"}},
      {"--random-output-len", {"output_len", "whole"}},
      {"--sharegpt-output-len", {"sharegpt_output_len", "whole"}},
      {"--random-range-ratio", {"range_ratio", "ratio"}},
      {"--dataset-name", {"dataset_name", "a dataset name"}},
      {"--dataset-path", {"dataset_path", "a file"}},
      {"--prefix-repetition-prefix-len", {"prefix_len", "whole"}},
      {"--prefix-repetition-suffix-len", {"suffix_len", "whole"}},
      {"--prefix-repetition-num-prefixes", {"num_prefixes", "whole"}},
      {"--prefix-repetition-output-len", {"output_len", "whole"}},
      {"--slo-ttft-ms", {"slo_ttft_ms", "number"}},
      {"--slo-tpot-ms", {"slo_tpot_ms", "number"}},
      {"--goodput", {"goodput", "goodput"}},
      {"--percentile-metrics", {"percentile_metrics", "metric list"}},
      {"--metric-percentiles", {"metric_percentiles", "percentile list"}},
      {"--ramp-up-strategy", {"ramp_strategy", "a ramp"}},
      {"--ramp-up-start-rps", {"ramp_start", "number"}},
      {"--ramp-up-end-rps", {"ramp_end", "number"}},
      {"--backend", {"backend", "a backend"}},
      {"--endpoint", {"endpoint", "an endpoint"}},
      {"--temperature", {"temperature", "number or 0"}},
      {"--ignore-eos", {"ignore_eos", ""}},
      {"--save-result", {"", ""}},
      {"--save-detailed", {"save_detailed", ""}},
      {"--api-key", {"", "a key"}},
      {"--base-url", {"", "a URL"}},
      {"--result-dir", {"", "a folder"}},
      {"--seed", {"seed", "whole"}},
      {"--saturate", {"saturate", ""}},
      {"--quiet", {"", ""}},
      {"--out", {"", "a folder"}},
      {"--max-runtime", {"", "number"}},
      {"--tokenizer", {"tokenizer", "a tokenizer file"}},
  };
  return table;
}

// vLLM flags whose meaning runara has under another spelling or not at all: the error says which.
const std::map<std::string, std::string>& not_taken() {
  static const std::map<std::string, std::string> table{
      {"--host", "give the server as URL (or --base-url http://HOST:PORT)"},
      {"--port", "give the server as URL (or --base-url http://HOST:PORT)"},
      {"--result-filename", "runara writes results.json (and bench/results.json) in the folder --result-dir/--out names"},
      {"--served-model-name", "--model is the name sent in requests (the served name); --tokenizer counts tokens"},
      {"--request-id-prefix", "runara numbers requests itself (requests.jsonl's index)"},
      {"--profile", "runara does not start the server's profiler; use a script for that"},
  };
  return table;
}

bool is_ratio(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && v >= 0 && v < 1;
}

bool is_non_negative(const std::string& text, bool whole) {
  return text == "0" || is_number(text, whole);
}

// Each comma-separated item of `text` passes `ok`.
template <typename Ok>
bool each_item(const std::string& text, Ok ok) {
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    if (!ok(text.substr(start, comma - start))) return false;
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

bool is_percentile(const std::string& item) {
  char* end = nullptr;
  const double v = std::strtod(item.c_str(), &end);
  return !item.empty() && *end == '\0' && v > 0 && v < 100;
}

bool is_metric(const std::string& item) { return item == "ttft" || item == "tpot" || item == "itl" || item == "e2el"; }

// vLLM's --goodput KEY:VALUE items: ttft, tpot or e2el, in milliseconds.
bool is_goodput(const std::string& item) {
  const std::size_t colon = item.find(':');
  return colon != std::string::npos && is_metric(item.substr(0, colon)) && item.substr(0, colon) != "itl" &&
         is_number(item.substr(colon + 1), false);
}

// vLLM's --metadata KEY=VALUE items; a comma would split the list runara passes them in.
bool is_metadata(const std::string& item) {
  const std::size_t equals = item.find('=');
  return equals != std::string::npos && equals > 0 && item.find(',') == std::string::npos &&
         item.find("://") == std::string::npos;
}

// A load's name, and so its folder: letters, digits, '.', '_' and '-'.
bool is_label(const std::string& text) {
  if (text.empty() || text.size() > 64 || text[0] == '.' || text[0] == '-') return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

// --tokenizer names a file here, never a model to fetch: a Hugging Face id (ORG/NAME, which
// vLLM's --tokenizer takes) is said to be one, with how to get its tokenizer.json.
std::string check_tokenizer(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return "";
  if (std::filesystem::is_directory(path, ec)) {
    return "--tokenizer expects the tokenizer.json file, and '" + path + "' is a folder: pass " +
           (std::filesystem::exists(path + "/tokenizer.json", ec) ? "'" + path + "/tokenizer.json'" : "the tokenizer.json in it");
  }
  static const std::regex hf_id("[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*");
  if (path.size() <= 200 && std::regex_match(path, hf_id)) {
    return "--tokenizer expects a file, and '" + path + "' looks like a Hugging Face model id (runara downloads nothing): "
           "download its tokenizer.json (huggingface-cli download " + path + " tokenizer.json --local-dir DIR) and pass "
           "its path (--tokenizer DIR/tokenizer.json)";
  }
  return "--tokenizer expects the model's tokenizer.json file, got '" + path + "': no such file";
}

// "" when `value` suits `expects`, else the usage error. Durations become seconds.
std::string check_value(const std::string& flag, const std::string& expects, std::string& value) {
  std::string want;
  if (expects == "whole list" && !is_list(value, true)) want = "whole numbers > 0 separated by commas, such as 1,8,32";
  if (expects == "list" && !is_list(value, false)) want = "numbers > 0 separated by commas";
  if (expects == "rate list" && value != "inf" && !is_list(value, false)) want = "requests per second > 0 (a list separated by commas), or inf";
  if (expects == "whole" && !is_number(value, true)) want = "a whole number > 0";
  if (expects == "whole or 0" && !is_non_negative(value, true)) want = "a whole number >= 0";
  if (expects == "number" && !is_number(value, false)) want = "a number > 0";
  if (expects == "number or 0" && !is_non_negative(value, false)) want = "a number >= 0";
  if (expects == "ratio" && !is_ratio(value)) want = "a number >= 0 and < 1";
  if (expects == "percentile list" && !each_item(value, is_percentile)) want = "percentiles between 0 and 100 separated by commas, such as 50,90,99";
  if (expects == "metric list" && !each_item(value, is_metric)) want = "metrics separated by commas, of ttft, tpot, itl, e2el";
  if (expects == "goodput" && !each_item(value, is_goodput)) want = "KEY:MS items (ttft, tpot or e2el), such as ttft:500 tpot:50";
  if (expects == "a label" && !is_label(value)) want = "a name of letters, digits, '.', '_' and '-' (at most 64), such as tp8-fp8";
  if (expects == "metadata" && !is_metadata(value)) want = "KEY=VALUE items without commas, such as version=0.9.2 tp=8";
  if (expects == "a ramp" && value != "linear" && value != "exponential") want = "linear or exponential";
  if (expects == "a dataset name" && value != "random" && value != "sharegpt" && value != "custom" && value != "prefix_repetition") {
    want = "random, prefix_repetition, sharegpt or custom (a JSON-lines file of prompts); other vLLM datasets are not built in: give their prompts as --dataset-path FILE";
  }
  if (expects == "a backend" && value != "vllm" && value != "openai" && value != "openai-chat") want = "vllm, openai or openai-chat";
  if (expects == "an endpoint" && value != "/v1/completions" && value != "/v1/chat/completions") want = "/v1/completions or /v1/chat/completions";
  if (expects == "duration") {
    const double seconds = parse_duration(value);
    if (!(seconds > 0)) want = "a duration such as 60s, 5m or 90";
    else value = std::to_string(seconds);
  }
  if (expects == "a tokenizer file") return check_tokenizer(value);
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

namespace {

// The URL, positional or --base-url: granted by being named.
std::string take_url(const std::string& text, Options& options, std::map<std::string, std::string>& params) {
  if (params.count("url")) return "one URL only, got '" + params["url"] + "' and '" + text + "'";
  const auto url = parse_target_url(text);
  if (!url) return "URL " + url.error();
  options.permissions.hosts.push_back(url->host + ":" + std::to_string(url->port));
  params["url"] = text;
  return "";
}

// What a flag's value does besides becoming a param of the scenario.
void apply_value(const std::string& flag, const std::string& value, Options& options, std::map<std::string, std::string>& params) {
  if (flag == "--tokenizer" || flag == "--dataset-path") options.permissions.read_paths.push_back(value);  // the one file read
  if (flag == "--out" || flag == "--result-dir") {
    options.out_dir = value;
  } else if (flag == "--max-runtime") {
    options.max_runtime_s = std::strtod(value.c_str(), nullptr);
  } else if (flag == "--api-key") {
    // A secret: masked wherever it would be printed, and sent only to the URL's host (below).
    options.secrets["RUNARA_BENCH_API_KEY"] = value;
    params["api_key"] = "RUNARA_BENCH_API_KEY";
  } else if (flag == "--backend" || flag == "--endpoint") {
    params["endpoint"] = value == "openai-chat" || value == "/v1/chat/completions" ? "chat" : "completions";
  } else if (flag == "--request-rate" && value == "inf") {
    // vLLM's default: no schedule, every request at once up to --max-concurrency (a closed loop here).
  } else if (flag == "--goodput" || flag == "--metadata") {
    const std::string& param = flags().at(flag).param;
    params[param] = params.count(param) ? params[param] + "," + value : value;
  } else {
    params[flags().at(flag).param] = value;
  }
}

// Combinations the scenario cannot run, as usage errors.
std::string check_combination(const std::map<std::string, std::string>& params) {
  if (!params.count("url")) return "a URL is required (the server's base URL, e.g. http://10.0.0.5:8000)";
  const bool ramp = params.count("ramp_strategy") || params.count("ramp_start") || params.count("ramp_end");
  const int modes = static_cast<int>(params.count("concurrency") + params.count("rate") + params.count("saturate") + (ramp ? 1 : 0));
  if (modes > 1) return "-c, --rate, --saturate and --ramp-up-strategy are alternatives: give one";
  if (params.count("concurrency") && params.count("max_concurrency")) return "-c and --max-concurrency are the same here (a closed loop's streams): give one";
  if (params.count("duration") && params.count("requests")) return "-d and -n are alternatives: give one";
  if (ramp && !(params.count("ramp_strategy") && params.count("ramp_start") && params.count("ramp_end"))) {
    return "--ramp-up-strategy needs --ramp-up-start-rps and --ramp-up-end-rps (and the other way round)";
  }
  if (ramp && !params.count("requests")) return "--ramp-up-strategy spreads its rates over the requests: give -n/--num-prompts";
  if (params.count("burstiness") && !params.count("rate") && !ramp) return "--burstiness shapes an open loop: give --request-rate too";
  if (params.count("dataset_path") && params.count("dataset_name") && params.at("dataset_name") == "random") {
    return "--dataset-name random makes synthetic prompts: leave --dataset-path out, or name its format (sharegpt, custom)";
  }
  const bool repetition = params.count("dataset_name") && params.at("dataset_name") == "prefix_repetition";
  if (!repetition && (params.count("prefix_len") || params.count("suffix_len") || params.count("num_prefixes"))) {
    return "--prefix-repetition-* flags shape the prefix_repetition dataset: give --dataset-name prefix_repetition too";
  }
  if (repetition && params.count("dataset_path")) return "--dataset-name prefix_repetition makes synthetic prompts: leave --dataset-path out";
  if (repetition && params.count("input_len")) return "--dataset-name prefix_repetition sizes prompts with --prefix-repetition-prefix-len and --prefix-repetition-suffix-len, not --input-len";
  if (params.count("dataset_name") && params.at("dataset_name") != "random" && !repetition && !params.count("dataset_path")) {
    return "--dataset-name " + params.at("dataset_name") + " needs --dataset-path FILE";
  }
  const bool sharegpt = params.count("dataset_name") && params.at("dataset_name") == "sharegpt";
  if (params.count("sharegpt_output_len") && !sharegpt) {
    return "--sharegpt-output-len fixes the output length of ShareGPT prompts: give --dataset-name sharegpt too (for other prompts, --output-len)";
  }
  if (params.count("output_len") && sharegpt) {
    return "with --dataset-name sharegpt each conversation's reply gives its request's output length (as in vLLM): "
           "give --sharegpt-output-len N to fix it instead of --output-len/--random-output-len";
  }
  return "";
}

}  // namespace

int bench_command(int argc, char** argv) {
  Options options;
  std::map<std::string, std::string> params;
  CommandLineParser parser(kUsage);
  for (const auto& [name, flag] : flags()) {
    const std::string a = name, expects = flag.expects, param = flag.param;
    // Switches: --save-result (what runara bench always does), --ignore-eos, --saturate,
    // --save-detailed, --quiet.
    if (expects.empty()) {
      parser.flag(a, [a, param, &options, &params] {
        if (a == "--quiet") options.quiet = true;
        else if (!param.empty()) params[param] = "1";
      });
    } else if (a == "--base-url") {
      parser.option(a, [&](const std::string& v) { return take_url(v, options, params); });
    } else {
      parser.option(a, [a, expects, &options, &params](const std::string& given) {
        std::string value = given;
        if (std::string error = check_value(a, expects, value); !error.empty()) return error;
        return apply_value(a, value, options, params), std::string();
      });
    }
  }
  for (const auto& [name, why] : not_taken()) {
    const std::string error = name + " is vllm bench's; here " + why;
    parser.option(name, [error](const std::string&) { return error; }, error);
  }
  // The URL; and --goodput and --metadata take several words, as vLLM's do.
  parser.positionals([&](const std::string& v) {
    if (params.count("goodput") && is_goodput(v)) return params["goodput"] += "," + v, std::string();
    if (params.count("metadata") && is_metadata(v)) return params["metadata"] += "," + v, std::string();
    return take_url(v, options, params);
  });
  if (int status = parser.parse_or_status(argc, argv, 2, "runara bench", kUsage); status >= 0) return status;
  if (std::string error = check_combination(params); !error.empty()) return usage_error(error);
  if (params.count("api_key")) {
    const auto url = parse_target_url(params["url"]);
    options.permissions.secret_destinations["RUNARA_BENCH_API_KEY"] = {url->host + ":" + std::to_string(url->port)};
  }
  if (options.out_dir.empty()) options.out_dir = default_out();
  for (const auto& [key, value] : params) options.args.push_back(key + "=" + value);
  options.history_dir = default_state_dir();
  options.history_name = "runara bench";
  if (params.count("url")) options.history_where = "endpoint " + params["url"];
  // The command is runara's code: runara_bench and all it requires come from the stdlib, never
  // from the current folder (someone else's, perhaps: theirs would hold the --api-key handle).
  options.stdlib_modules_only = true;

  Runtime runtime(options, terminal_events());

  runtime.add_primitive(make_fake_server_primitive());  // http_load.fake_server (the simulator)
  install_signal_handlers(runtime);
  return report_outcome(runtime.run_string("require('runara_bench').run(runara.params)", "=(runara bench)"));
}

}  // namespace runara::cli

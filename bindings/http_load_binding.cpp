// The `http_load` table: load generation against HTTP and OpenAI-compatible LLM servers.
// The work — the plan and its sweep (runtime/load_job/plan.hpp), the agent for `on`, worker
// threads, timing, statistics, result files — is runtime/load_job/'s and runtime/load/'s; this
// file reads a script's options into plain values, calls the engine, and pushes its results.
//
//   local r = http_load.run{ url = "http://" .. d.ip .. ":8000", model = "llama",
//                            concurrency = 64, requests = 500 }
//   print(r.output_throughput, r.p99_ttft_ms)
#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/cores.hpp"
#include "base/redact_json.hpp"
#include "gpu_metrics_binding.hpp"
#include "http_load_remote.hpp"
#include "http_load_summary.hpp"
#include "http_load_thresholds.hpp"
#include "http_load_vllm_options.hpp"
#include "kit/functions.hpp"
#include "kit/raise.hpp"
#include "kit/wait.hpp"
#include "load/request_target.hpp"
#include "load/result_metadata.hpp"
#include "load_job/job.hpp"
#include "load_job/plan.hpp"
#include "load_job/run_loads.hpp"
#include "load_job/target_url.hpp"
#include "run_target_policy.hpp"
#include "runara/runtime.hpp"
#include "script/args.hpp"
#include "script/values.hpp"

namespace runara {

namespace {

const char* const kRun = "http_load.run";

// The URL, parsed as libcurl parses it; raises a clear error for anything the target policy
// could not judge (see load_job/target_url.hpp).
TargetUrl parse_url(lua_State* L, const std::string& text) {
  auto parsed = parse_target_url(text);
  if (!parsed) args::raise(L, "%s: option 'url' %s, got '%s' (expected e.g. \"http://10.0.0.5:8000\")", kRun, parsed.error().c_str(), text.c_str());
  return std::move(parsed).value();
}

// A literal IP in the URL is checked now, before anything starts; names are checked when they
// are resolved, at connect time.
void check_literal_target(lua_State* L, const TargetPolicy& policy, const TargetUrl& p) {
  sockaddr_storage ss{};
  if (!numeric_host(p.host, p.port, ss)) return;
  std::string why;
  if (!policy.allows(reinterpret_cast<sockaddr*>(&ss), p.host, why)) args::raise(L, "%s", why.c_str());
}

bool is_list(lua_State* L, int index) {
  if (!lua_istable(L, index)) return false;
  lua_rawgeti(L, index, 1);
  const bool list = !lua_isnil(L, -1);
  lua_pop(L, 1);
  return list;
}

// A number option that may also be a list (a sweep): returns its values, empty when absent.
std::vector<double> number_or_list(lua_State* L, const char* field) {
  std::vector<double> out;
  lua_getfield(L, 1, field);
  if (lua_type(L, -1) == LUA_TNUMBER) {
    out.push_back(lua_tonumber(L, -1));
  } else if (is_list(L, -1)) {
    for (int i = 1;; ++i) {
      lua_rawgeti(L, -1, i);
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        break;
      }
      if (lua_type(L, -1) != LUA_TNUMBER) args::raise(L, "%s: option '%s' must be a number or a list of numbers; item %d is %s", kRun, field, i, luaL_typename(L, -1));
      out.push_back(lua_tonumber(L, -1));
      lua_pop(L, 1);
    }
  } else if (!lua_isnil(L, -1)) {
    args::raise(L, "%s: option '%s' must be a number or a list of numbers, got %s", kRun, field, luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return out;
}

void check_positive(lua_State* L, const char* fn, const char* field, double v, double max, bool integer) {
  if (!(v > 0) || v > max || (integer && std::floor(v) != v)) {
    args::raise(L, "%s: option '%s' must be a%s number > 0 and <= %g, got %g", fn, field, integer ? "n integer" : "", max, v);
  }
}

double positive(lua_State* L, int index, const char* fn, const char* field, double fallback, double max, bool integer) {
  const auto v = args::opt_number(L, index, fn, field);
  if (!v) return fallback;
  check_positive(L, fn, field, *v, max, integer);
  return *v;
}

// A string or a secret handle (whose name joins `secrets`: the load may only go where it may).
std::string string_or_secret(lua_State* L, Context& rt, int index, const std::string& what, std::vector<std::string>& secrets) {
  if (lua_type(L, index) == LUA_TSTRING) return std::string(lua_tostring(L, index), lua_objlen(L, index));
  if (std::string name = rt.secret_name(L, index); !name.empty()) {
    secrets.push_back(std::move(name));
    return rt.secret_value(L, index);
  }
  args::raise(L, "%s: %s must be a string or a secret (runara.secret), got %s", kRun, what.c_str(), luaL_typename(L, index));
}

// Headers the request itself defines: a script setting them could smuggle a second request
// past the granted server, or aim the request at another virtual host.
bool reserved_header(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name == "host" || name == "content-length" || name == "transfer-encoding" || name == "connection";
}

// RFC 9110 token characters.
bool header_name_ok(const std::string& name) {
  static const std::string kSpecials = "!#$%&'*+-.^_`|~";
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || kSpecials.find(static_cast<char>(c)) != std::string::npos;
  });
}

void add_header(lua_State* L, Context& rt, std::vector<std::string>& headers, std::vector<std::string>& secrets) {
  if (lua_type(L, -2) != LUA_TSTRING) args::raise(L, "%s: option 'headers' must map header names to values, e.g. { [\"X-Id\"] = \"7\" }", kRun);
  const std::string name(lua_tostring(L, -2), lua_objlen(L, -2));
  if (!header_name_ok(name)) args::raise(L, "%s: header name '%s' is not valid: use letters, digits and !#$%%&'*+-.^_`|~", kRun, name.c_str());
  if (reserved_header(name)) {
    args::raise(L, "%s: header '%s' may not be set by a script: runara sets Host, Content-Length, Transfer-Encoding and Connection itself", kRun, name.c_str());
  }
  const std::string value = string_or_secret(L, rt, lua_gettop(L), "header '" + name + "'", secrets);
  if (value.find_first_of(std::string("\r\n\0", 3)) != std::string::npos) args::raise(L, "%s: header '%s' holds a line break or a NUL byte", kRun, name.c_str());
  headers.push_back(name + ": " + value);
}

// The request headers, and the names of the secrets among them.
std::vector<std::string> parse_headers(lua_State* L, Context& rt, std::vector<std::string>& secrets) {
  std::vector<std::string> headers;
  lua_getfield(L, 1, "headers");
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      add_header(L, rt, headers, secrets);
      lua_pop(L, 1);
    }
  } else if (!lua_isnil(L, -1)) {
    args::raise(L, "%s: option 'headers' must be a table, got %s", kRun, luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  lua_getfield(L, 1, "api_key");
  if (!lua_isnil(L, -1)) {
    const std::string key = string_or_secret(L, rt, lua_gettop(L), "option 'api_key'", secrets);
    if (key.find_first_of(std::string("\r\n\0", 3)) != std::string::npos) args::raise(L, "%s: option 'api_key' holds a line break or a NUL byte", kRun);
    headers.push_back("Authorization: Bearer " + key);
  }
  lua_pop(L, 1);
  return headers;
}

// prompts.prefix_tokens / prompts.prefixes: K shared prefixes of P tokens (vLLM's prefix_repetition).
void parse_shared_prefixes(lua_State* L, int t, PromptSource& src) {
  const char* fn = "http_load.run: prompts";
  lua_getfield(L, t, "prefix_tokens");
  const bool has_prefix = !lua_isnil(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, t, "prefixes");
  const bool has_count = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (!has_prefix) {
    if (has_count) args::raise(L, "%s: prompts.prefixes needs prompts.prefix_tokens (the length of each shared prefix)", kRun);
    return;
  }
  src.prefix_tokens = static_cast<int>(positive(L, t, fn, "prefix_tokens", 0, 1e6, true));
  src.prefixes = static_cast<int>(positive(L, t, fn, "prefixes", 1, 1e6, true));
  const int shortest = std::max(1, static_cast<int>(std::lround(src.input_tokens * (1 - src.range_ratio))));
  if (src.prefix_tokens >= shortest) {
    args::raise(L, "%s: prompts.prefix_tokens (%d) must be less than input_tokens (%d%s), so each request has a suffix of its own",
                kRun, src.prefix_tokens, shortest, src.range_ratio > 0 ? " at the shortest, with range_ratio" : "");
  }
}

void parse_prompts(lua_State* L, Context& rt, PromptSource& src) {
  lua_getfield(L, 1, "prompts");
  const int t = lua_gettop(L);
  if (lua_type(L, t) == LUA_TSTRING) {
    src.kind = PromptSource::Kind::kFixed;
    src.text = lua_tostring(L, t);
  } else if (lua_istable(L, t)) {
    const char* fn = "http_load.run: prompts";
    args::only_fields(L, t, fn, {"input_tokens", "range_ratio", "count", "prefix_tokens", "prefixes", "file", "format", "tokenizer"});
    if (auto tokenizer = args::opt_string(L, t, fn, "tokenizer")) {
      std::string error;
      src.tokenizer = rt.readable_path(*tokenizer, error);
      if (src.tokenizer.empty()) args::raise(L, "%s: prompts.tokenizer: %s", kRun, error.c_str());
    }
    if (auto file = args::opt_string(L, t, fn, "file")) {
      std::string error;
      src.kind = PromptSource::Kind::kFile;
      src.path = rt.readable_path(*file, error);
      if (src.path.empty()) args::raise(L, "%s: prompts.file: %s", kRun, error.c_str());
      src.format = args::opt_string(L, t, fn, "format").value_or("");
      if (!src.format.empty() && src.format != "lines" && src.format != "jsonl" && src.format != "sharegpt") {
        args::raise(L, "%s: prompts.format must be \"lines\", \"jsonl\" or \"sharegpt\", got \"%s\"", kRun, src.format.c_str());
      }
    } else {
      src.input_tokens = static_cast<int>(positive(L, t, fn, "input_tokens", 1024, 1e6, true));
      const double ratio = args::opt_number(L, t, fn, "range_ratio").value_or(0);
      if (ratio < 0 || ratio >= 1) args::raise(L, "%s: prompts.range_ratio must be >= 0 and < 1, got %g", kRun, ratio);
      src.range_ratio = ratio;
      src.count = static_cast<std::size_t>(positive(L, t, fn, "count", 1000, 1e6, true));
      parse_shared_prefixes(L, t, src);
    }
  } else if (!lua_isnil(L, t)) {
    args::raise(L, "%s: option 'prompts' must be a string or a table such as { input_tokens = 1024 } or { file = \"prompts.jsonl\" }, got %s", kRun, luaL_typename(L, t));
  }
  lua_pop(L, 1);
}

void parse_openai(lua_State* L, OpenAiParams& o) {
  o.model = args::opt_string(L, 1, kRun, "model").value_or("");
  if (o.model.empty()) args::raise(L, "%s: option 'model' is required in openai mode (the served model's name, e.g. \"meta-llama/Llama-3.3-70B-Instruct\")", kRun);
  o.endpoint = args::opt_string(L, 1, kRun, "endpoint").value_or("completions");
  if (o.endpoint != "completions" && o.endpoint != "chat") args::raise(L, "%s: option 'endpoint' must be \"completions\" or \"chat\", got \"%s\"", kRun, o.endpoint.c_str());
  o.stream = args::opt_bool(L, 1, kRun, "stream").value_or(true);
  lua_getfield(L, 1, "max_tokens");
  o.max_tokens_given = !lua_isnil(L, -1);  // unset: a ShareGPT file's replies give the lengths
  lua_pop(L, 1);
  o.max_tokens = static_cast<int>(positive(L, 1, kRun, "max_tokens", 128, 1e7, true));
  o.ignore_eos = args::opt_bool(L, 1, kRun, "ignore_eos").value_or(false);
  o.temperature = args::opt_number(L, 1, kRun, "temperature");
  lua_getfield(L, 1, "extra_body");
  if (lua_istable(L, -1)) o.extra_body = to_json(L, lua_gettop(L), "option 'extra_body'", 1 << 20);
  else if (!lua_isnil(L, -1)) args::raise(L, "%s: option 'extra_body' must be a table, got %s", kRun, luaL_typename(L, -1));
  lua_pop(L, 1);
}

void parse_http(lua_State* L, LoadSpec& base) {
  base.method = args::opt_string(L, 1, kRun, "method").value_or("GET");
  for (char c : base.method) {
    if (!(c >= 'A' && c <= 'Z')) args::raise(L, "%s: option 'method' must be an upper-case HTTP method such as \"GET\" or \"POST\", got \"%s\"", kRun, base.method.c_str());
  }
  const std::string body = args::opt_string(L, 1, kRun, "body").value_or("");
  base.templated = body.find("{{index}}") != std::string::npos || body.find("{{random}}") != std::string::npos;
  base.bodies = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{body});
}

void parse_warmup(lua_State* L, LoadSpec& base) {
  lua_getfield(L, 1, "warmup");
  const int t = lua_gettop(L);
  if (lua_type(L, t) == LUA_TNUMBER) {
    const double n = lua_tonumber(L, t);
    if (n < 0 || std::floor(n) != n) args::raise(L, "%s: option 'warmup' must be a whole number of requests or { seconds = S }, got %g", kRun, n);
    base.warmup_requests = static_cast<std::uint64_t>(n);
  } else if (lua_istable(L, t)) {
    args::only_fields(L, t, "http_load.run: warmup", {"requests", "seconds"});
    base.warmup_requests = static_cast<std::uint64_t>(args::opt_number(L, t, kRun, "requests").value_or(0));
    base.warmup_s = args::opt_number(L, t, kRun, "seconds").value_or(0);
    if (base.warmup_s < 0) args::raise(L, "%s: warmup.seconds must be >= 0", kRun);
  } else if (!lua_isnil(L, t)) {
    args::raise(L, "%s: option 'warmup' must be a number of requests or { seconds = S }, got %s", kRun, luaL_typename(L, t));
  }
  lua_pop(L, 1);
}

void parse_slo(lua_State* L, LoadSpec& base) {
  lua_getfield(L, 1, "slo");
  const int t = lua_gettop(L);
  if (lua_istable(L, t)) {
    const char* fn = "http_load.run: slo";
    args::only_fields(L, t, fn, {"ttft_ms", "tpot_ms", "e2el_ms"});
    base.slo.ttft_ms = positive(L, t, fn, "ttft_ms", 0, 1e9, false);
    base.slo.tpot_ms = positive(L, t, fn, "tpot_ms", 0, 1e9, false);
    base.slo.e2el_ms = positive(L, t, fn, "e2el_ms", 0, 1e9, false);
  } else if (!lua_isnil(L, t)) {
    args::raise(L, "%s: option 'slo' must be a table such as { ttft_ms = 500, tpot_ms = 50 }, got %s", kRun, luaL_typename(L, t));
  }
  lua_pop(L, 1);
}

void parse_load_model(lua_State* L, LoadSpec& base, std::vector<double>& concurrency, std::vector<double>& rates) {
  concurrency = number_or_list(L, "concurrency");
  rates = number_or_list(L, "rate");
  if (parse_ramp_option(L, base)) {
    if (!concurrency.empty() || !rates.empty()) args::raise(L, "%s: 'ramp' sets the rate, from its start_rate to its end_rate: leave 'rate' and 'concurrency' out", kRun);
    rates.push_back(base.ramp_end);  // the peak: what the load's threads are sized for
  }
  for (double c : concurrency) check_positive(L, kRun, "concurrency", c, 100000, true);
  for (double r : rates) check_positive(L, kRun, "rate", r, 1e6, false);
  const auto arrival = args::opt_string(L, 1, kRun, "arrival");
  const auto burstiness = args::opt_number(L, 1, kRun, "burstiness");
  if ((arrival || burstiness) && rates.empty()) args::raise(L, "%s: 'arrival' and 'burstiness' shape an open loop: give 'rate' too", kRun);
  base.arrival = burstiness ? Arrival::kGamma : Arrival::kPoisson;
  if (arrival) {
    auto parsed = parse_arrival(*arrival);
    if (!parsed) args::raise(L, "%s: option 'arrival' must be \"poisson\", \"gamma\" or \"constant\", got \"%s\"", kRun, arrival->c_str());
    base.arrival = *parsed;
  }
  base.burstiness = positive(L, 1, kRun, "burstiness", 1, 1000, false);
  base.max_concurrency = static_cast<int>(positive(L, 1, kRun, "max_concurrency", 0, 100000, true));
  if (base.max_concurrency && rates.empty()) args::raise(L, "%s: 'max_concurrency' caps an open loop: give 'rate' too (a closed loop's 'concurrency' is its cap)", kRun);
  base.requests = static_cast<std::uint64_t>(positive(L, 1, kRun, "requests", 0, 1e9, true));
  base.duration_s = positive(L, 1, kRun, "duration", 0, 30 * 86400, false);
  if (!base.requests && base.duration_s <= 0) args::raise(L, "%s: say how long to run: requests = N or duration = seconds", kRun);
  if (base.ramp != Ramp::kNone && !base.requests) {
    args::raise(L, "%s: 'ramp' spreads its rates over the load's requests (as vLLM's --ramp-up-strategy): give requests = N", kRun);
  }
}


// record = "all" | "errors" | "none" | a fraction: which requests requests.jsonl gets.
void parse_record(lua_State* L, LoadSpec& base) {
  lua_getfield(L, 1, "record");
  if (lua_type(L, -1) == LUA_TNUMBER) {
    const double rate = lua_tonumber(L, -1);
    if (!(rate > 0 && rate <= 1)) args::raise(L, "%s: option 'record' as a number is the fraction of requests to keep, > 0 and <= 1, got %g", kRun, rate);
    base.record_sample = rate;
  } else if (lua_type(L, -1) == LUA_TSTRING) {
    const std::string mode = lua_tostring(L, -1);
    if (mode == "errors") base.record = LoadSpec::Record::kErrors;
    else if (mode == "none") base.record = LoadSpec::Record::kNone;
    else if (mode != "all") args::raise(L, "%s: option 'record' must be \"all\", \"errors\", \"none\" or a fraction such as 0.01, got \"%s\"", kRun, mode.c_str());
  } else if (!lua_isnil(L, -1)) {
    args::raise(L, "%s: option 'record' must be \"all\", \"errors\", \"none\" or a fraction such as 0.01, got %s", kRun, luaL_typename(L, -1));
  }
  lua_pop(L, 1);
}

// give_up_after, max_request_lines, and the run's memory budget every load draws from.
void parse_limits(lua_State* L, Context& rt, LoadSpec& base) {
  lua_getfield(L, 1, "give_up_after");
  const bool never = lua_isboolean(L, -1) && !lua_toboolean(L, -1);
  lua_pop(L, 1);
  base.give_up_s = never ? 0 : positive(L, 1, kRun, "give_up_after", 30, 30 * 86400, false);
  base.max_request_lines = static_cast<std::uint64_t>(positive(L, 1, kRun, "max_request_lines", 1000000, 1e9, true));
  base.memory = rt.memory_budget();
  parse_record(L, base);
}

// The URL, mode, headers and `on`; returns the names of the secrets among the headers.
std::vector<std::string> read_target(lua_State* L, Context& rt, LoadOptions& o, std::optional<RemoteAgent>& remote) {
  const std::string url = args::opt_string(L, 1, kRun, "url").value_or("");
  if (url.empty()) args::raise(L, "%s: option 'url' is required (e.g. url = \"http://\" .. d.ip .. \":8000\")", kRun);
  o.url = parse_url(L, url);
  const bool has_model = args::opt_string(L, 1, kRun, "model").has_value();
  const std::string mode = args::opt_string(L, 1, kRun, "mode").value_or(has_model ? "openai" : "http");
  if (mode != "openai" && mode != "http") args::raise(L, "%s: option 'mode' must be \"openai\" or \"http\", got \"%s\"", kRun, mode.c_str());
  o.base.mode = mode == "openai" ? LoadMode::kOpenAi : LoadMode::kHttp;
  std::vector<std::string> secrets;
  o.headers = parse_headers(L, rt, secrets);
  // May point `o.url` at a simulated machine's own address. Secrets reach the machine inside ssh.
  const auto secrets_policy = secrets.empty() ? nullptr : run_target_policy(rt, "http_load", secrets, /*plain_http=*/false);
  remote = parse_remote_load(L, rt, o.url, secrets_policy.get());
  return secrets;
}

// The transport's options: timeout, HTTP/2, ca_file, buffer.
void read_transport(lua_State* L, Context& rt, LoadOptions& o) {
  LoadSpec& base = o.base;
  base.timeout_s = positive(L, 1, kRun, "timeout", base.mode == LoadMode::kOpenAi ? 600 : 60, 86400, false);
  base.http2 = args::opt_bool(L, 1, kRun, "http2").value_or(false);
  const curl_version_info_data* curl = curl_version_info(CURLVERSION_NOW);
  if (base.http2 && o.url.scheme == "http" && curl->version_num < 0x080000) {
    // libcurl before 8.0 breaks the second request on a reused h2c connection (curl issue #10634).
    args::raise(L, "%s: http2 = true on http:// (h2c) needs libcurl 8.0 or later; this one is %s and fails reused h2c connections. Use https:// for HTTP/2, or leave http2 out", kRun, curl->version);
  }
  if (auto ca = args::opt_string(L, 1, kRun, "ca_file")) {
    if (o.url.scheme != "https") args::raise(L, "%s: option 'ca_file' is for https:// URLs (this one is %s://)", kRun, o.url.scheme.c_str());
    std::string error;
    base.ca_file = rt.readable_path(*ca, error);
    if (base.ca_file.empty()) args::raise(L, "%s: ca_file: %s", kRun, error.c_str());
  }
  base.buffer_bytes = static_cast<long>(positive(L, 1, kRun, "buffer_bytes", 0, 512 * 1024, true));
  if (base.buffer_bytes && base.buffer_bytes < 1024) args::raise(L, "%s: option 'buffer_bytes' must be at least 1024", kRun);
}

// `metadata = { version = "0.9.2" }`: string pairs for the top level of each results.json,
// bounded and checked against runara's own keys by load/result_metadata.hpp.
void parse_metadata(lua_State* L, LoadSpec& base) {
  lua_getfield(L, 1, "metadata");
  const int t = lua_gettop(L);
  if (lua_isnil(L, t)) return lua_pop(L, 1);
  if (!lua_istable(L, t)) args::raise(L, "%s: option 'metadata' must be a table such as { version = \"0.9.2\" }, got %s", kRun, luaL_typename(L, t));
  nlohmann::json metadata = nlohmann::json::object();
  lua_pushnil(L);
  while (lua_next(L, t)) {
    if (lua_type(L, -2) != LUA_TSTRING) args::raise(L, "%s: option 'metadata' must map names to strings; it has a %s key", kRun, luaL_typename(L, -2));
    const std::string key(lua_tostring(L, -2), lua_objlen(L, -2));
    if (lua_type(L, -1) != LUA_TSTRING) args::raise(L, "%s: metadata key '%s' must have a string value, got %s", kRun, key.c_str(), luaL_typename(L, -1));
    metadata[key] = std::string(lua_tostring(L, -1), lua_objlen(L, -1));
    lua_pop(L, 1);
  }
  lua_settop(L, t - 1);
  kit::check(L, kRun, check_result_metadata(metadata));
  base.metadata = std::make_shared<const nlohmann::json>(std::move(metadata));
}

// The options table at index 1, read into plain values (load_job/plan.hpp makes the plan).
LoadOptions read_options(lua_State* L, Context& rt, std::optional<RemoteAgent>& remote) {
  args::table(L, 1, kRun, "options");
  args::only_fields(L, 1, kRun,
                    {"url", "model", "mode", "endpoint", "stream", "prompts", "seed", "max_tokens", "ignore_eos",
                     "temperature", "extra_body", "method", "headers", "body", "api_key", "concurrency", "rate",
                     "arrival", "burstiness", "max_concurrency", "requests", "duration", "warmup", "threads",
                     "timeout", "slo", "http2", "name", "buffer_bytes", "ca_file", "give_up_after",
                     "max_request_lines", "thresholds", "quiet", "record", "gpu", "on", "ramp", "percentiles",
                     "summary_metrics", "save_detailed", "metadata"});
  LoadOptions o;
  const std::vector<std::string> secrets = read_target(L, rt, o, remote);
  if (o.base.mode == LoadMode::kOpenAi) {
    parse_openai(L, o.openai);
    parse_prompts(L, rt, o.prompts);
  } else {
    parse_http(L, o.base);
  }
  o.base.policy = run_target_policy(rt, "http_load", secrets, o.url.scheme == "http");
  if (!remote) check_literal_target(L, *o.base.policy, o.url);  // the agent judges its own target
  o.base.seed = static_cast<std::uint64_t>(args::opt_number(L, 1, kRun, "seed").value_or(0));
  read_transport(L, rt, o);
  parse_limits(L, rt, o.base);
  o.base.save_detailed = args::opt_bool(L, 1, kRun, "save_detailed").value_or(false);
  if (o.base.save_detailed && remote) {
    args::raise(L, "%s: save_detailed = true keeps each request's details in runara's memory, and a load run 'on' "
                   "another machine sends back only its records: leave 'on' out, or read requests.jsonl (ttft_ms)", kRun);
  }
  parse_warmup(L, o.base);
  parse_slo(L, o.base);
  o.base.thresholds = parse_thresholds_option(L, 1, kRun);
  parse_load_model(L, o.base, o.concurrency, o.rates);
  o.name = args::opt_string(L, 1, kRun, "name");
  o.threads = static_cast<int>(positive(L, 1, kRun, "threads", 0, 256, true));
  o.cores = usable_cores();
  parse_percentiles_option(L, o.base);
  o.summary_metrics = parse_summary_metrics_option(L);
  parse_metadata(L, o.base);
  return o;
}
}  // namespace

namespace {

class HttpLoadPrimitive;
HttpLoadPrimitive& primitive_of(lua_State* L) {
  return *static_cast<HttpLoadPrimitive*>(lua_touserdata(L, lua_upvalueindex(1)));
}

void push_results(lua_State* L, const std::vector<nlohmann::json>& results, bool sweep) {
  if (!sweep) return push_json(L, results.front());
  lua_createtable(L, static_cast<int>(results.size()), 0);
  for (std::size_t i = 0; i < results.size(); ++i) {
    push_json(L, results[i]);
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

class HttpLoadPrimitive final : public Primitive {
 public:
  std::string name() const override { return "http_load"; }

  void open(lua_State* L, Context& ctx) override {
    lua_newtable(L);
    kit::set_functions(L, ctx, {{"run", &HttpLoadPrimitive::run, kit::Waits::yes}}, this);
  }

 private:
  // Reads the options, has load_job make and run the plan (installing the agent first for
  // `on`), and pushes its results.
  static int run(lua_State* L) {
    auto& self = primitive_of(L);
    auto& rt = Context::from(L);
    const int number = self.loads_.next_number();  // taken even when the options are refused
    std::optional<RemoteAgent> remote;
    LoadOptions options = read_options(L, rt, remote);
    options.load_number = number;
    LoadPlan plan = kit::value_or_raise(L, kRun, make_load_plan(std::move(options)));
    std::string error;
    const int out_fd = rt.open_out_dir(error);  // the files are opened below it, never through a symlink
    if (out_fd < 0) args::raise(L, "%s: %s", kRun, error.c_str());
    place_load_plan(plan, rt.out_dir(), make_out_fd(out_fd));
    plan.remote = std::move(remote);
    GpuLoadHooks gpu = gpu_load_hooks(L, 1, kRun);  // option gpu = a gpu_metrics sampler
    const bool quiet = args::opt_bool(L, 1, kRun, "quiet").value_or(rt.options().quiet);
    kit::check(L, kRun, self.loads_.admit(plan));
    const bool sweep = plan.points.size() > 1;
    auto job = std::make_shared<LoadJob>(rt.loop(), std::move(plan), hooks(rt, std::move(gpu), quiet, sweep));
    auto wait = kit::Wait::start(L, kRun, [job] { job->abort(); });
    job->start([&rt, wait, sweep](Result<std::vector<nlohmann::json>> results) {
      // Not fail(), which redacts the whole message: it quotes the script's own text (the load's
      // name, in its folder), and a masked copy would tell which text was a secret. The job
      // redacted what the server sent; run.log gets a copy redacted whole.
      if (!results) {
        rt.log("http_load.run failed: " + results.error());
        return wait->fail_as_is(results.error());
      }
      wait->settle<std::vector<nlohmann::json>>(std::move(results), [sweep](lua_State* co, std::vector<nlohmann::json>& r) {
        push_results(co, r, sweep);
        return 1;
      });
    });
    return wait->yield(L);
  }

  static LoadJob::Hooks hooks(Context& rt, GpuLoadHooks gpu, bool quiet, bool sweep) {
    LoadJob::Hooks hooks;
    hooks.progress = [&rt](const std::string& line) { rt.progress(line); };
    hooks.log = [&rt](const std::string& line) { rt.log(line); };
    hooks.redact = [&rt](const nlohmann::json& j) { return redact_json(j, [&rt](std::string_view text) { return rt.redact(text); }); };
    hooks.load_started = [&rt](const std::string& url) {
      Activity load;
      load.kind = Activity::Kind::load;
      load.text = url;
      rt.activity(load);
    };
    hooks.point_started = std::move(gpu.started);
    hooks.point_ended = std::move(gpu.ended);
    hooks.point_finished = point_reporter(rt, quiet, sweep);
    return hooks;
  }

  RunLoads loads_;  // numbers, folders and threads of this run's loads
};

}  // namespace

std::unique_ptr<Primitive> make_http_load_primitive() { return std::make_unique<HttpLoadPrimitive>(); }

}  // namespace runara

#include "load_job/plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <utility>

#include "base/run_output.hpp"
#include "load_job/openai_url.hpp"

namespace runara {

namespace {

Status positive(const char* field, double v, double max, bool integer) {
  if (!(v > 0) || v > max || (integer && std::floor(v) != v)) {
    char text[200];
    std::snprintf(text, sizeof text, "option '%s' must be a%s number > 0 and <= %g, got %g", field, integer ? "n integer" : "", max, v);
    return Error{text};
  }
  return {};
}

Status check_header_size(const std::vector<std::string>& headers) {
  std::size_t bytes = 0;
  for (const auto& h : headers) bytes += h.size() + 2;
  if (bytes <= kMaxHeaderBytes) return {};
  return Error{"options 'headers' and 'api_key' make " + std::to_string(std::min<std::size_t>(bytes, 1u << 30)) +
               " bytes of headers; at most " + std::to_string(kMaxHeaderBytes) + " are allowed"};
}

// Closed or open loop, and the sweep's points.
Status check_load_model(std::vector<double>& concurrency, const std::vector<double>& rates) {
  if (!concurrency.empty() && !rates.empty()) return Error{"give either 'concurrency' (closed loop) or 'rate' (open loop), not both"};
  if (concurrency.empty() && rates.empty()) concurrency.push_back(1);
  for (double c : concurrency)
    if (auto s = positive("concurrency", c, 100000, true); !s) return s;
  for (double r : rates)
    if (auto s = positive("rate", r, 1e6, false); !s) return s;
  if (concurrency.size() + rates.size() > kMaxSweepPoints) {
    return Error{"a sweep may have at most " + std::to_string(kMaxSweepPoints) + " points, got " +
                 std::to_string(concurrency.size() + rates.size())};
  }
  return {};
}

Status check_name(const std::string& name) {
  if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos ||
      name[0] == '.') {
    return Error{"option 'name' names a folder: use letters, digits, '.', '_' and '-', got \"" + name + "\""};
  }
  if (starts_with_reserved_name(name)) {
    return Error{"option 'name' names a folder, and \"" + name + "\" is written by runara itself; choose another name"};
  }
  return {};
}

// The request's URL and the headers the mode adds.
Status aim(LoadOptions& o, LoadPlan& plan) {
  LoadSpec& base = o.base;
  if (base.mode == LoadMode::kOpenAi) {
    plan.openai = o.openai;
    plan.prompts = o.prompts;
    base.model = o.openai.model;
    base.endpoint = o.openai.endpoint;
    base.stream = o.openai.stream;
    base.method = "POST";
    base.tokenizer_id = o.prompts.tokenizer.empty() ? base.model : o.prompts.tokenizer;
    o.headers.push_back("Content-Type: application/json");
    base.url = openai_endpoint_url(o.url, o.openai.endpoint);
    if (base.url.empty()) return Error{"option 'url': libcurl could not add the endpoint's path to '" + o.url.url + "'"};
  } else {
    base.url = o.url.url;
  }
  base.url_host = o.url.host;
  base.url_port = o.url.port;
  return {};
}

}  // namespace

std::string point_name(const std::string& name, bool sweep, const LoadSpec& s) {
  if (!sweep) return name;
  if (!s.open_loop()) return name + "-c" + std::to_string(s.concurrency);
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g", s.rate);
  return name + "-r" + rate;
}

nlohmann::json load_echo(const LoadPlan& plan, const LoadSpec& base, const std::vector<std::string>& summary_metrics) {
  nlohmann::json o = {{"seed", base.seed}, {"timeout", base.timeout_s}, {"http2", base.http2},
                      {"warmup_requests", base.warmup_requests}, {"warmup_seconds", base.warmup_s},
                      {"requests", base.requests ? nlohmann::json(base.requests) : nlohmann::json(nullptr)},
                      {"duration", base.duration_s > 0 ? nlohmann::json(base.duration_s) : nlohmann::json(nullptr)},
                      {"method", base.method}};
  if (!base.ca_file.empty()) o["ca_file"] = base.ca_file;
  if (base.mode == LoadMode::kOpenAi) {
    const OpenAiParams& a = plan.openai;
    o["endpoint"] = a.endpoint;
    o["stream"] = a.stream;
    o["max_tokens"] = a.max_tokens;
    o["ignore_eos"] = a.ignore_eos;
    if (a.temperature) o["temperature"] = *a.temperature;
    if (!a.extra_body.empty()) o["extra_body"] = a.extra_body;
    const PromptSource& p = plan.prompts;
    if (p.kind == PromptSource::Kind::kSynthetic) {
      o["prompts"] = {{"input_tokens", p.input_tokens}, {"range_ratio", p.range_ratio}, {"count", p.count}};
      // Only when set, so the prompt-set hash of a load without shared prefixes stays what it was.
      if (p.prefix_tokens > 0) o["prompts"]["prefix_tokens"] = p.prefix_tokens, o["prompts"]["prefixes"] = p.prefixes;
    }
    else if (p.kind == PromptSource::Kind::kFile) o["prompts"] = {{"file", p.path}, {"format", p.format.empty() ? "auto" : p.format}};
    else o["prompts"] = "fixed";
    if (!p.tokenizer.empty()) o["prompts"]["tokenizer"] = p.tokenizer;
  }
  if (!base.percentiles.empty()) o["percentiles"] = base.percentiles;
  if (!summary_metrics.empty()) o["summary_metrics"] = summary_metrics;
  return o;
}

Result<LoadPlan> make_load_plan(LoadOptions o) {
  if (auto s = check_header_size(o.headers); !s) return Error{s.error()};
  if (auto s = check_load_model(o.concurrency, o.rates); !s) return Error{s.error()};
  const std::string name = o.name.value_or("http_load-" + std::to_string(o.load_number));
  if (auto s = check_name(name); !s) return Error{s.error()};
  LoadPlan plan;
  if (auto s = aim(o, plan); !s) return Error{s.error()};
  LoadSpec& base = o.base;
  // Shared by every point (a sweep has up to 1000): copies would not be counted by --max-memory.
  base.headers = std::make_shared<const std::vector<std::string>>(std::move(o.headers));
  base.echo = std::make_shared<const nlohmann::json>(load_echo(plan, base, o.summary_metrics));
  const bool sweep = o.concurrency.size() + o.rates.size() > 1;
  for (double c : o.concurrency) plan.points.push_back(base), plan.points.back().concurrency = static_cast<int>(c);
  for (double r : o.rates) plan.points.push_back(base), plan.points.back().rate = r;
  for (auto& p : plan.points) {
    p.threads = o.threads ? o.threads : p.auto_threads(o.cores);
    p.threads_auto = o.threads == 0;
    p.name = point_name(name, sweep, p);
  }
  plan.name = name;
  return plan;
}

void place_load_plan(LoadPlan& plan, std::string out_dir, std::shared_ptr<const int> out_fd) {
  plan.out_dir = std::move(out_dir);
  plan.out_fd = std::move(out_fd);
  if (plan.points.size() > 1) plan.sweep_dir = plan.out_dir + "/" + plan.name;
}

std::vector<std::string> load_folders(const LoadPlan& plan) {
  std::vector<std::string> folders;
  for (const auto& p : plan.points) folders.push_back(p.name);
  if (plan.points.size() > 1) folders.push_back(plan.name);
  return folders;
}

}  // namespace runara

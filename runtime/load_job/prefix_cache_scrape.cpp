#include "load_job/prefix_cache_scrape.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>

#include "curl/http_client.hpp"
#include "load_job/openai_url.hpp"
#include "net/target_policy.hpp"
#include "runara/memory_budget.hpp"

namespace runara {

namespace {

// The sample's value when `line` is a sample of `name` (any labels), else nullopt.
std::optional<double> sample_of(std::string_view line, std::string_view name) {
  if (!line.starts_with(name) || line.size() <= name.size()) return std::nullopt;
  const char next = line[name.size()];
  if (next != '{' && next != ' ') return std::nullopt;
  std::size_t at = name.size();
  if (next == '{') {
    at = line.find('}', at);  // label values may not hold '}' unescaped in vLLM's names; good enough
    if (at == std::string_view::npos) return std::nullopt;
    ++at;
  }
  const std::string rest(line.substr(at));
  char* end = nullptr;
  const double v = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<PrefixCacheCounters> prefix_cache_counters(std::string_view text) {
  PrefixCacheCounters c;
  bool seen = false;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty() || line[0] == '#') continue;
    if (auto v = sample_of(line, "vllm:prefix_cache_queries_total")) c.queries += *v, seen = true;
    else if (auto h = sample_of(line, "vllm:prefix_cache_hits_total")) c.hits += *h;
  }
  if (!seen) return std::nullopt;
  return c;
}

nlohmann::json prefix_cache_fields(const std::optional<PrefixCacheCounters>& before,
                                   const std::optional<PrefixCacheCounters>& after) {
  nlohmann::json out = {{"prefix_cache_hit_rate", nullptr}, {"prefix_cache_queried_tokens", nullptr},
                        {"prefix_cache_hit_tokens", nullptr}};
  if (!before || !after) return out;
  const double queries = after->queries - before->queries, hits = after->hits - before->hits;
  if (queries < 0 || hits < 0) return out;  // the server restarted between the two
  out["prefix_cache_queried_tokens"] = queries;
  out["prefix_cache_hit_tokens"] = hits;
  if (queries > 0) out["prefix_cache_hit_rate"] = hits / queries;
  return out;
}

std::string metrics_url(const std::string& endpoint_url) {
  const std::string tokenize = tokenize_url(endpoint_url);  // the root's /tokenize, "" when unknown
  constexpr std::string_view kTail = "/tokenize";
  const std::size_t at = tokenize.find(kTail);
  if (tokenize.empty() || at == std::string::npos) return {};
  // tokenize_url put /tokenize at the path's end; a query or fragment may follow it.
  return tokenize.substr(0, at) + "/metrics" + tokenize.substr(at + kTail.size());
}

struct PrefixCacheScrape::Impl {
  uv_loop_t* loop = nullptr;
  HttpRequest request;
  std::shared_ptr<MemoryBudget> memory;
  MemoryReservation held;
  std::unique_ptr<HttpClient> http;
  Done done;

  void finish(std::optional<PrefixCacheCounters> counters) {
    held.reset();
    if (!done) return;
    Done cb = std::move(done);
    done = nullptr;
    cb(counters);
  }
};

PrefixCacheScrape::PrefixCacheScrape(uv_loop_t* loop, const LoadSpec& spec) : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.loop = loop;
  im.memory = spec.memory;
  HttpRequest& r = im.request;
  r.url = metrics_url(spec.url);
  r.headers = spec.header_lines();
  r.timeout_s = std::min(kScrapeTimeoutS, spec.timeout_s);
  r.max_body_bytes = kScrapeMaxBytes;
  r.ca_file = spec.ca_file;
  // Always set: no proxy and a connection of its own, judged as the load's are.
  r.allow_connect = connect_judge(spec.policy, spec.url_host);
}

PrefixCacheScrape::~PrefixCacheScrape() {
  impl_->done = nullptr;
  impl_->http.reset();  // aborts what is in flight, no callback
}

void PrefixCacheScrape::start(Done done) {
  Impl* im = impl_.get();
  im->done = std::move(done);
  if (im->request.url.empty()) return im->finish(std::nullopt);
  im->held = MemoryReservation(im->memory, 0);
  if (im->memory && !im->held.grow(kScrapeMaxBytes)) return im->finish(std::nullopt);
  im->http = std::make_unique<HttpClient>(im->loop);
  // The client calls back only while it exists, and the Impl owns it.
  im->http->send(im->request, [im](HttpResponse r) {
    // A few hundred KiB of text at most in practice: scanned here, on the loop.
    std::optional<PrefixCacheCounters> counters;
    if (r.error.empty() && r.status == 200) counters = prefix_cache_counters(r.body);
    im->finish(counters);
  });
}

}  // namespace runara

#include "load_job/tokenize_check.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "base/text.hpp"
#include "base/json_limits.hpp"
#include "load_job/off_loop.hpp"
#include "load_job/openai_url.hpp"
#include "net/target_policy.hpp"
#include "curl/http_client.hpp"
#include "runara/memory_budget.hpp"

namespace runara {

namespace {

constexpr int kCurlTimedOut = 28;  // CURLE_OPERATION_TIMEDOUT
// A count past this is no prompt's (and the sums of a few such stay far from overflowing).
constexpr std::int64_t kMaxCount = std::int64_t{1} << 40;

// The message an error answer carries: vLLM's {"error": {"message"}}, its older {"message"}, or
// FastAPI's {"detail"}; "" when there is none.
std::string server_message(std::string_view body) {
  std::string ignored;
  const auto j = parse_json_limited(body.substr(0, std::min<std::size_t>(body.size(), 64 * 1024)), ignored);
  if (!j || !j->is_object()) return {};
  for (const auto* at : {j->contains("error") && (*j)["error"].is_object() ? &(*j)["error"] : nullptr, &*j}) {
    if (!at) continue;
    for (const char* key : {"message", "detail"}) {
      if (at->contains(key) && (*at)[key].is_string()) return printable((*at)[key].get<std::string>(), 200);
    }
  }
  return {};
}

// Why an answer that is not 200 counts nothing. FastAPI answers a route it does not have with 404
// {"detail": "Not Found"} (405 "Method Not Allowed" when only another method is routed there);
// vLLM's own 404 for a model it does not serve ("The model `x` does not exist.") says so: the
// route is there, the model is not.
std::string status_why(long status, std::string_view body) {
  const std::string message = server_message(body);
  if (status == 404 && message.find("model") != std::string::npos && message.find("does not exist") != std::string::npos) {
    return "the server does not serve that model (HTTP 404: " + message + "); its GET /v1/models lists the ones it serves";
  }
  if ((status == 404 || status == 405) && (message.empty() || message == "Not Found" || message == "Method Not Allowed")) {
    return "the server does not offer POST /tokenize (HTTP " + std::to_string(status) + ")";
  }
  return "/tokenize answered HTTP " + std::to_string(status) + (message.empty() ? "" : ": " + message);
}

bool has_content_type(const std::vector<std::string>& headers) {
  return std::any_of(headers.begin(), headers.end(), [](const std::string& h) {
    std::string name = h.substr(0, h.find(':'));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    return name == "content-type";
  });
}

}  // namespace

std::vector<std::size_t> tokenize_sample(const PromptPool& pool) {
  const std::size_t n = std::min(kTokenizePrompts, pool.size());
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = i * pool.size() / n;  // distinct: the pool has at least n prompts
    if (pool.at(at).tokens <= kTokenizeMaxPromptTokens) out.push_back(at);
  }
  return out;
}

std::string tokenize_body(const std::string& model, std::string_view prompt) {
  const nlohmann::ordered_json body = {{"model", model}, {"prompt", prompt}, {"add_special_tokens", false}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::size_t tokenize_answer_limit(int client_tokens) {
  return (std::size_t{64} << 10) + 64 * static_cast<std::size_t>(std::max(client_tokens, 0));
}

std::optional<std::int64_t> tokenize_answer_count(long status, std::string_view body, std::size_t max_tree_bytes,
                                                  std::string& why) {
  if (status != 200) {
    why = status_why(status, body);
    return std::nullopt;
  }
  std::string error;
  const auto j = parse_json_limited(body, error, kMaxJsonDepth, max_tree_bytes);
  if (!j) {
    why = "the answer of /tokenize " + (is_json_too_large(error) ? error : "is " + printable(error, 200));
    return std::nullopt;
  }
  const auto count = j->is_object() ? j->find("count") : j->end();
  if (!j->is_object() || count == j->end() || !count->is_number_integer() || count->get<std::int64_t>() < 0 ||
      count->get<std::int64_t>() > kMaxCount) {
    why = "the answer of /tokenize has no whole-number \"count\" (vLLM's is {\"count\", \"max_model_len\", \"tokens\"})";
    return std::nullopt;
  }
  const std::int64_t n = count->get<std::int64_t>();
  if (const auto tokens = j->find("tokens"); tokens != j->end() && (!tokens->is_array() || static_cast<std::int64_t>(tokens->size()) != n)) {
    why = "the answer of /tokenize says \"count\": " + std::to_string(n) + " but its \"tokens\" is not a list of that many";
    return std::nullopt;
  }
  return n;
}

nlohmann::json tokenize_verdict(std::size_t prompts, std::int64_t client_tokens, std::int64_t server_tokens) {
  const double pct = client_tokens > 0 ? 100.0 * static_cast<double>(server_tokens - client_tokens) / static_cast<double>(client_tokens) : 0;
  const bool ok = std::abs(pct) <= kTokenizeTolerancePct;
  return {{"status", ok ? "ok" : "differ"}, {"prompts", prompts},         {"client_tokens", client_tokens},
          {"server_tokens", server_tokens}, {"difference_pct", pct},     {"ok", ok},
          {"tolerance_pct", kTokenizeTolerancePct}};
}

nlohmann::json tokenize_not_run(const std::string& why) { return {{"status", "not run"}, {"why", why}}; }

std::string tokenize_unavailable(const LoadSpec& spec, const PromptPool* pool, bool remote) {
  if (spec.mode != LoadMode::kOpenAi) return "not an OpenAI-API load";
  if (remote) return "the load ran on the machine itself (`on`): /tokenize is asked only by a load sent from here";
  if (!pool || pool->size() == 0) return "the load has no prompts";
  if (tokenize_url(spec.url).empty()) {
    return "the URL's path does not end in /v1/completions or /v1/chat/completions: where the server's /tokenize is cannot be told";
  }
  return {};
}

namespace {

// One prompt asked about, and its answer.
struct Ask {
  std::size_t prompt = 0;
  int client_tokens = 0;
  std::size_t limit = 0;  // tokenize_answer_limit
  HttpResponse answer;
};

}  // namespace

struct TokenizeCheck::Impl : std::enable_shared_from_this<TokenizeCheck::Impl> {
  uv_loop_t* loop = nullptr;
  std::string url, url_host, model, ca_file;
  std::vector<std::string> headers;
  std::shared_ptr<const TargetPolicy> policy;
  double timeout_s = kTokenizeTimeoutS;
  std::shared_ptr<MemoryBudget> memory;
  std::shared_ptr<const PromptPool> pool;
  Redact redact;
  Done done;
  std::vector<Ask> asks;
  std::size_t answered = 0;
  std::unique_ptr<HttpClient> http;
  MemoryReservation held;  // the request bodies and the answers at their limits, while in flight
  bool cancelled = false;

  void start() {
    for (std::size_t i : tokenize_sample(*pool)) asks.push_back({i, pool->at(i).tokens, tokenize_answer_limit(pool->at(i).tokens), {}});
    if (asks.empty()) {
      return finish(tokenize_not_run("every prompt asked about is longer than " + std::to_string(kTokenizeMaxPromptTokens) +
                                     " tokens (its answer would list them all)"));
    }
    std::vector<std::string> bodies;
    std::size_t bytes = 0;
    for (const Ask& a : asks) {
      bodies.push_back(tokenize_body(model, pool->at(a.prompt).text));
      bytes += a.limit + bodies.back().size();
    }
    held = MemoryReservation(memory, 0);
    if (memory && !held.grow(bytes)) return finish(tokenize_not_run(memory->refusal(bytes, "the /tokenize check (its requests and their answers)")));
    http = std::make_unique<HttpClient>(loop);
    for (std::size_t i = 0; i < asks.size(); ++i) {
      // The client calls back only while it exists, and this owns it: `this` outlives every call.
      http->send(request(asks[i], std::move(bodies[i])), [this, i](HttpResponse r) { answer_came(i, std::move(r)); });
    }
  }

  HttpRequest request(const Ask& a, std::string body) const {
    HttpRequest req;
    req.method = "POST";
    req.url = url;
    req.headers = headers;
    req.body = std::move(body);
    req.timeout_s = timeout_s;
    req.max_body_bytes = a.limit;
    req.ca_file = ca_file;
    // Always set: no proxy and a connection of its own, as the load's; judged as the load's are.
    req.allow_connect = connect_judge(policy, url_host);
    return req;
  }

  void answer_came(std::size_t i, HttpResponse r) {
    asks[i].answer = std::move(r);
    if (++answered < asks.size()) return;
    http.reset();  // safe from its own callback; nothing of it is needed any more
    judge();
  }

  // Parsing (up to kTokenizePrompts answers of up to a few MiB) happens on the thread pool.
  void judge() {
    auto self = shared_from_this();
    auto verdict = std::make_shared<nlohmann::json>();
    auto why = std::make_shared<std::string>();
    off_loop(
        loop, [self, verdict, why] { *verdict = self->count_all(*why); },
        [self, verdict, why] {
          if (self->cancelled) return;
          self->finish(why->empty() ? std::move(*verdict) : tokenize_not_run(self->redacted(*why)));
        });
  }

  // Off the loop: the verdict over every answer, or (`why` set) the first one that counts nothing.
  nlohmann::json count_all(std::string& why) const {
    std::int64_t client = 0, server = 0;
    for (const Ask& a : asks) {
      const auto n = count_one(a, why);
      if (!n) return {};
      client += a.client_tokens;
      server += *n;
    }
    return tokenize_verdict(asks.size(), client, server);
  }

  std::optional<std::int64_t> count_one(const Ask& a, std::string& why) const {
    const HttpResponse& r = a.answer;
    if (!r.error.empty()) {
      why = "/tokenize: " + (r.curl_code == kCurlTimedOut ? "no answer within " + seconds(timeout_s) + " (" + r.error + ")" : r.error);
      return std::nullopt;
    }
    // While it is parsed, the answer's document counts against --max-memory, as json_tree_bytes
    // estimates it; past 8 times the answer's own limit it is refused before anything is built.
    const std::size_t tree_limit = 8 * a.limit;
    MemoryReservation parsing(memory, 0);
    if (const std::size_t tree = json_tree_bytes(r.body); memory && tree <= tree_limit && !parsing.grow(tree)) {
      why = memory->refusal(tree, "parsing an answer of /tokenize");
      return std::nullopt;
    }
    return tokenize_answer_count(r.status, r.body, tree_limit, why);
  }

  static std::string seconds(double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%g s", s);
    return text;
  }

  std::string redacted(const std::string& text) const { return redact ? redact(text) : text; }

  // On the loop, with nothing in flight: the answers are let go with their reservation.
  void finish(nlohmann::json result) {
    asks = {};
    held.reset();
    result["url"] = url;
    if (!done) return;
    Done cb = std::move(done);
    done = nullptr;
    cb(std::move(result));
  }
};

TokenizeCheck::TokenizeCheck(uv_loop_t* loop, const LoadSpec& spec, std::shared_ptr<const PromptPool> pool, Redact redact)
    : impl_(std::make_shared<Impl>()) {
  Impl& im = *impl_;
  im.loop = loop;
  im.url = tokenize_url(spec.url);
  im.url_host = spec.url_host;
  im.model = spec.model;
  im.ca_file = spec.ca_file;
  im.headers = spec.header_lines();
  if (!has_content_type(im.headers)) im.headers.push_back("Content-Type: application/json");
  im.policy = spec.policy;
  im.timeout_s = std::min(kTokenizeTimeoutS, spec.timeout_s);
  im.memory = spec.memory;
  im.pool = std::move(pool);
  im.redact = std::move(redact);
}

// The parse on the thread pool may still run: it holds the Impl, and its end sees `cancelled`.
TokenizeCheck::~TokenizeCheck() {
  impl_->cancelled = true;
  impl_->done = nullptr;
  impl_->http.reset();  // aborts what is in flight, no callback
  impl_->held.reset();
}

void TokenizeCheck::start(Done done) {
  auto keep = impl_;  // `done` may end this check's owner before start() returns
  keep->done = std::move(done);
  keep->start();
}

}  // namespace runara

// The fake DigitalOcean's HTTP front: the server's lifecycle, and the per-request pipeline
// (unreachable -> rate limit -> injected failure -> auth -> route -> lost answer -> decorate ->
// latency).
#include "sim/fake_digitalocean.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <deque>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "sim/fake_do_ratelimit.hpp"
#include "sim/fake_do_routes.hpp"
#include "sim/fake_do_store.hpp"
#include "sim/fake_do_support.hpp"
#include "sim/loopback_http_server.hpp"

namespace runara::sim {

using nlohmann::json;

namespace {

constexpr const char* kJson = "application/json; charset=utf-8";

fakedo::StoreConfig store_config(const FakeDoConfig& c) {
  fakedo::StoreConfig s;
  s.active_after_s = c.active_after_s;
  s.delete_after_s = c.delete_after_s;
  s.droplet_limit = c.droplet_limit;
  s.account_uuid = c.account_uuid;
  s.reject_delete_while_new = c.reject_delete_while_new;
  s.public_ipv4 = c.public_ipv4;
  s.on_created = c.on_created;
  s.on_deleted = c.on_deleted;
  s.default_vpcs = c.default_vpcs;
  s.firewall_apply_s = c.firewall_apply_s;
  s.multi_node_gpus = c.multi_node_gpus;
  return s;
}

fakedo::RateLimitConfig rate_config(const FakeDoConfig& c) {
  fakedo::RateLimitConfig r;
  r.enforce = c.enforce_rate_limits;
  r.per_hour = c.rate_limit_per_hour;
  r.per_minute = c.rate_limit_per_minute;
  return r;
}

std::string error_id_for(int status) {
  switch (status) {
    case 400: return "bad_request";
    case 401: return "Unauthorized";
    case 403: return "forbidden";
    case 404: return "not_found";
    case 409: return "conflict";
    case 422: return "unprocessable_entity";
    case 429: return "too_many_requests";
    default: return "server_error";
  }
}

const char* gateway_reason(int status) {
  switch (status) {
    case 502: return "Bad Gateway";
    case 503: return "Service Temporarily Unavailable";
    case 504: return "Gateway Time-out";
    default: return "Error";
  }
}

struct Failure {
  int status;
  std::optional<int> retry_after_s;
  std::string match;  // empty: any request; else waits for a request it matches (see matches())
};

// "POST /v2/vpcs" matches that request line exactly; "DELETE /v2/vpcs/*" any that starts so.
bool matches(const std::string& pattern, const std::string& line) {
  if (pattern.empty()) return true;
  if (pattern.back() == '*') return line.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  return line == pattern;
}

constexpr const char* kDropletCreate = "POST /v2/droplets";

}  // namespace

struct FakeDigitalOcean::Impl {
  explicit Impl(FakeDoConfig c)
      : cfg(std::move(c)),
        store(store_config(cfg)),
        limiter(rate_config(cfg)),
        latency_s(cfg.latency_s),
        rng(std::random_device{}()) {}

  // Everything the request pipeline touches.
  mutable std::mutex mu;
  FakeDoConfig cfg;
  fakedo::Store store;
  fakedo::RateLimiter limiter;
  std::deque<Failure> failures;
  std::vector<std::string> drops;  // drop_next_response patterns, oldest first
  double latency_s;
  std::vector<std::string> request_log;
  std::mt19937_64 rng;
  std::atomic<bool> unreachable{false};

  // Server lifecycle (start/stop/set_unreachable), separate from `mu` so requests keep flowing.
  std::mutex life_mu;
  std::unique_ptr<LoopbackHttpServer> server;
  std::atomic<int> port{0};
  bool started = false;  // between start() and stop()

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port.load()); }

  void launch(int want_port);  // life_mu held
  void halt();                 // life_mu held
  HttpResponse handle(const HttpRequest& req);
};

void FakeDigitalOcean::Impl::launch(int want_port) {
  auto svr = std::make_unique<LoopbackHttpServer>([this](const HttpRequest& req) { return handle(req); });
  try {
    port = svr->start(want_port);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("FakeDigitalOcean: ") + e.what());
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    store.set_base_url(base_url());
  }
  server = std::move(svr);
}

// Closes the port and every open connection; a request in flight gets no answer.
void FakeDigitalOcean::Impl::halt() { server.reset(); }

HttpResponse FakeDigitalOcean::Impl::handle(const HttpRequest& req) {
  {
    std::lock_guard<std::mutex> lock(mu);
    request_log.push_back(req.method + " " + req.target);
  }
  HttpResponse res;
  res.drop = true;  // what an unreachable API and a dropped create answer
  if (unreachable) return res;

  fakedo::ApiRequest api;
  api.method = req.method == "HEAD" ? "GET" : req.method;
  api.path = req.path;
  for (const auto& [k, v] : req.params) api.params.emplace(k, v);
  api.body = req.body;
  api.base_url = base_url();

  fakedo::Reply reply;
  std::string content_type = kJson;
  std::string html;
  std::optional<int> retry_after;
  bool drop = false;
  std::string request_id;
  fakedo::RateDecision rate;
  double latency = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    api.per_page_default = cfg.per_page_default;
    request_id = fakedo::uuid4(rng);
    latency = latency_s;
    rate = limiter.admit(fakedo::is_key_list(api));
    if (rate.limited) {
      reply = fakedo::error_reply(429, "too_many_requests", "API Rate limit exceeded.");
      retry_after = rate.retry_after_s;
    } else if (!failures.empty() && matches(failures.front().match, fakedo::request_line(api))) {
      const Failure f = failures.front();
      failures.pop_front();
      retry_after = f.retry_after_s;
      if (f.status == 429) {
        reply = fakedo::error_reply(429, "too_many_requests", "API Rate limit exceeded.");
        rate.remaining = 0;
      } else if (f.status == 500) {
        reply = fakedo::error_reply(500, "server_error", "Unexpected server-side error");
      } else if (f.status >= 500) {
        // What a gateway in front of the API answers: not the API's JSON.
        reply.status = f.status;
        content_type = "text/html";
        const std::string title = std::to_string(f.status) + " " + gateway_reason(f.status);
        html = "<html>\r\n<head><title>" + title + "</title></head>\r\n<body>\r\n<center><h1>" + title +
               "</h1></center>\r\n</body>\r\n</html>\r\n";
      } else {
        reply = fakedo::error_reply(f.status, error_id_for(f.status), "Injected failure.");
      }
    } else {
      const std::string auth = req.header("authorization");
      const std::string scheme = auth.substr(0, std::min<std::size_t>(7, auth.size()));
      bool ok = auth.size() > 7 && std::equal(scheme.begin(), scheme.end(), "bearer ", [](char a, char b) {
                  return std::tolower(static_cast<unsigned char>(a)) == b;
                });
      ok = ok && auth.substr(7) == cfg.token;
      if (!ok) {
        reply = fakedo::error_reply(401, "Unauthorized", "Unable to authenticate you");
      } else {
        try {
          reply = fakedo::route(store, api);
        } catch (const std::exception&) {
          reply = fakedo::error_reply(500, "server_error", "Unexpected server-side error");
        }
        if (reply.status >= 200 && reply.status < 300 && api.method != "GET" && cfg.on_network_changed)
          cfg.on_network_changed(store.network());
        // A lost answer: the request took effect, its answer never arrives.
        if (reply.status >= 200 && reply.status < 300) {
          const std::string line = fakedo::request_line(api);
          const auto it = std::find_if(drops.begin(), drops.end(), [&](const std::string& p) { return matches(p, line); });
          if (it != drops.end()) {
            drops.erase(it);
            drop = true;
          }
        }
      }
    }
  }

  if (latency > 0) std::this_thread::sleep_for(std::chrono::duration<double>(latency));
  if (drop || unreachable) return res;

  res.drop = false;
  res.status = reply.status;
  res.headers = {{"ratelimit-limit", std::to_string(rate.limit)},
                 {"ratelimit-remaining", std::to_string(rate.remaining)},
                 {"ratelimit-reset", std::to_string(rate.reset)},
                 {"x-request-id", request_id},
                 {"Content-Type", content_type}};
  if (retry_after) res.headers.emplace_back("retry-after", std::to_string(*retry_after));
  if (!html.empty()) {
    res.body = html;
  } else if (!reply.body.is_null()) {
    if (reply.body.is_object() && reply.body.contains("id") && reply.body.contains("message") &&
        reply.status >= 400)
      reply.body["request_id"] = request_id;
    res.body = reply.body.dump();
  }
  return res;
}

FakeDigitalOcean::FakeDigitalOcean(FakeDoConfig cfg) : impl_(std::make_unique<Impl>(std::move(cfg))) {}

FakeDigitalOcean::~FakeDigitalOcean() { stop(); }

int FakeDigitalOcean::start(int port) {
  std::lock_guard<std::mutex> lock(impl_->life_mu);
  if (impl_->started) throw std::runtime_error("FakeDigitalOcean: already started");
  impl_->launch(port);
  impl_->started = true;
  if (impl_->unreachable) impl_->halt();  // keep the port, refuse connections
  return impl_->port;
}

void FakeDigitalOcean::stop() {
  std::lock_guard<std::mutex> lock(impl_->life_mu);
  impl_->halt();
  impl_->started = false;
}

int FakeDigitalOcean::port() const { return impl_->port; }

std::string FakeDigitalOcean::base_url() const { return impl_->base_url(); }

void FakeDigitalOcean::fail_next(int count, int status, std::optional<int> retry_after_s) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (int i = 0; i < count; ++i) impl_->failures.push_back({status, retry_after_s});
}

void FakeDigitalOcean::fail_next_create(int count, int status) { fail_next_matching(kDropletCreate, count, status); }

void FakeDigitalOcean::fail_next_matching(const std::string& request, int count, int status) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (int i = 0; i < count; ++i) impl_->failures.push_back({status, std::nullopt, request});
}

void FakeDigitalOcean::drop_next_create_response() { drop_next_response(kDropletCreate); }

void FakeDigitalOcean::drop_next_response(const std::string& request) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->drops.push_back(request);
}

void FakeDigitalOcean::vanish_next_create(double after_s) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->store.vanish_next_create(after_s);
}

void FakeDigitalOcean::set_latency(double seconds) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->latency_s = seconds;
}

void FakeDigitalOcean::set_unreachable(bool unreachable) {
  std::lock_guard<std::mutex> lock(impl_->life_mu);
  if (impl_->unreachable.exchange(unreachable) == unreachable || !impl_->started) return;
  if (unreachable)
    impl_->halt();
  else
    impl_->launch(impl_->port);
}

int FakeDigitalOcean::live_droplets() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->store.live_droplets();
}

int FakeDigitalOcean::existing_droplets() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->store.existing_droplets();
}

int FakeDigitalOcean::creates() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->store.creates();
}

std::vector<json> FakeDigitalOcean::droplets() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->store.droplets();
}

int FakeDigitalOcean::requests(const std::string& prefix) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  int n = 0;
  for (const auto& line : impl_->request_log) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

std::vector<std::string> FakeDigitalOcean::request_log() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->request_log;
}

std::vector<json> FakeDigitalOcean::keys() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->store.keys();
}

std::vector<json> FakeDigitalOcean::vpcs() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->store.vpcs();
}

std::vector<json> FakeDigitalOcean::firewalls() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->store.firewalls();
}

std::vector<json> FakeDigitalOcean::create_bodies() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->store.create_bodies();
}

void FakeDigitalOcean::add_key(const std::string& name, const std::string& public_key) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->store.create_key(json{{"name", name}, {"public_key", public_key}});
}

}  // namespace runara::sim

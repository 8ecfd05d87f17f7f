// DigitalOcean API client; see do_client.hpp for the contract.
#include "cloud/do_client.hpp"
#include "base/text.hpp"

#include "cloud/doctl_config.hpp"
#include "base/token_names.hpp"

#include <curl/curl.h>
#include <uv.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "base/json_limits.hpp"

namespace runara {

namespace {

using nlohmann::json;

constexpr int kMaxPages = 1000;

// "https://host/v2/x?page=2" -> "/v2/x?page=2"; anything not under /v2/ is refused.
std::optional<std::string> path_of_link(const std::string& link) {
  std::string path = link;
  if (auto scheme = link.find("://"); scheme != std::string::npos) {
    auto slash = link.find('/', scheme + 3);
    if (slash == std::string::npos) return std::nullopt;
    path = link.substr(slash);
  }
  if (path.rfind("/v2/", 0) != 0) return std::nullopt;
  for (char c : path)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return std::nullopt;
  return path;
}

// Printable prefix of a non-JSON body, for error messages.
std::string snippet(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, 200)) out += (c >= ' ' && c != 0x7f) ? c : ' ';
  return std::string(trim(out));
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s >= 0.095 ? "%.1f" : "%.2f", s);
  return buf;
}

double now_epoch_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::optional<double> header_number(const HttpResponse& r, const std::string& name) {
  auto it = r.headers.find(name);
  if (it == r.headers.end()) return std::nullopt;
  const std::string v(trim(it->second));
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !std::isfinite(d)) return std::nullopt;
  return d;
}

constexpr double kResetWaitCapS = 30;

// Seconds the server asked us to wait, if it did.
std::optional<double> server_wait(const HttpResponse& r) {
  std::optional<double> wait;
  if (auto ra = header_number(r, "retry-after")) {
    wait = *ra;
  } else if (auto it = r.headers.find("retry-after"); it != r.headers.end()) {
    const time_t when = curl_getdate(it->second.c_str(), nullptr);  // HTTP-date form
    if (when > 0) wait = static_cast<double>(when) - now_epoch_s();
  }
  // An explicit retry-after is the server's own answer (burst limits); the hourly window's
  // reset only matters when it gave none.
  if (r.status == 429 && !wait) {
    auto remaining = header_number(r, "ratelimit-remaining");
    auto reset = header_number(r, "ratelimit-reset");
    if (remaining && *remaining <= 0 && reset) {
      // The reset is when the oldest request of the hour expires: one slot frees up then, or
      // sooner in a sliding window. Waiting the whole way could stall a teardown for long, so
      // such waits are held to the ordinary backoff cap and retried.
      const double until = *reset - now_epoch_s();
      wait = std::min(until, kResetWaitCapS);
    }
  }
  if (wait) wait = std::max(0.0, *wait);
  return wait;
}

bool should_retry(const HttpResponse& r) {
  if (!r.error.empty()) {
    // Permanent local problems are not worth repeating.
    return r.curl_code != CURLE_URL_MALFORMAT && r.curl_code != CURLE_UNSUPPORTED_PROTOCOL &&
           r.curl_code != CURLE_WRITE_ERROR && r.curl_code != CURLE_FAILED_INIT &&
           r.curl_code != CURLE_OUT_OF_MEMORY;
  }
  return r.status == 429 || r.status >= 500;
}

// The body as JSON, or null when it is empty or not JSON (callers report that by what they
// expected). `refused` is set for an answer nested past json_limits or larger once parsed than
// kDoMaxTreeBytes ("is nested deeper than ...", "would take about ..."): refused outright.
json parse_body(const std::string& body, std::string& refused) {
  if (trim(body).empty()) return nullptr;
  std::string error;
  auto j = parse_json_limited(body, error, kMaxJsonDepth, kDoMaxTreeBytes);
  if (!j && is_json_too_deep(error)) refused = "is " + error;
  if (!j && is_json_too_large(error)) refused = error;
  return j ? std::move(*j) : json(nullptr);
}

// Within a refused transfer's error, the limit named as the DigitalOcean answer's.
std::string transport_error(const HttpResponse& resp) {
  if (resp.error.starts_with("response body larger than "))
    return "the answer is larger than " + std::to_string(kDoMaxBodyBytes) + " bytes (the limit on one answer)";
  return resp.error;
}

struct RetryTimer {
  uv_timer_t handle{};
  std::function<void()> fire;
};

void on_retry_timer_closed(uv_handle_t* h) { delete static_cast<RetryTimer*>(h->data); }

void close_retry_timer(RetryTimer* t) {
  t->fire = nullptr;
  uv_timer_stop(&t->handle);
  uv_close(reinterpret_cast<uv_handle_t*>(&t->handle), &on_retry_timer_closed);
}

}  // namespace

struct DoClient::Impl {
  HttpClient& http;
  std::string api_base;
  std::string token;
  DoClientOptions options;
  std::mt19937_64 rng;

  struct Op {
    Callback done;
    HttpClient::Id http_id = 0;
    RetryTimer* timer = nullptr;
    int attempts = 0;
  };
  std::map<OpId, Op> ops;
  OpId next_op = 1;

  struct Call {
    std::string method, path, body;
    bool retry = false;
  };
  using StepDone = std::function<void(HttpResponse)>;
  // The items gathered and the estimated size of the documents they came from.
  using PagesDone = std::function<void(std::optional<DoResult> failure, json items, std::size_t tree_bytes)>;

  Impl(HttpClient& h, std::string base, std::string tok, DoClientOptions opts)
      : http(h), api_base(std::move(base)), token(std::move(tok)), options(std::move(opts)) {
    while (!api_base.empty() && api_base.back() == '/') api_base.pop_back();
    if (options.seed != 0) {
      rng.seed(options.seed);
    } else {
      std::random_device rd;
      rng.seed((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
    }
  }

  std::string redact(std::string_view text) const {
    std::string out(text);
    if (token.empty()) return out;
    for (size_t pos = out.find(token); pos != std::string::npos;
         pos = out.find(token, pos + 10)) {
      out.replace(pos, token.size(), "[REDACTED]");
    }
    return out;
  }

  void log(const std::string& line) {
    if (options.log) options.log(redact(line));
  }

  OpId start(Callback done) {
    const OpId id = next_op++;
    ops[id].done = std::move(done);
    return id;
  }

  // Runs `fn` from the loop after `delay_s`, unless the op is cancelled first.
  void schedule(OpId op, double delay_s, std::function<void()> fn) {
    auto it = ops.find(op);
    if (it == ops.end()) return;
    auto* t = new RetryTimer;
    t->handle.data = t;
    t->fire = [this, op, fn = std::move(fn)] {
      if (auto o = ops.find(op); o != ops.end()) o->second.timer = nullptr;  // it is closing
      fn();
    };
    uv_timer_init(http.loop(), &t->handle);
    uv_update_time(http.loop());  // the loop's clock may be stale (e.g. after a ledger fsync)
    it->second.timer = t;
    const auto ms = static_cast<uint64_t>(std::llround(std::max(0.0, delay_s) * 1000.0));
    uv_timer_start(
        &t->handle,
        [](uv_timer_t* h) {
          auto* self = static_cast<RetryTimer*>(h->data);
          auto fire = std::move(self->fire);
          close_retry_timer(self);
          if (fire) fire();
        },
        ms, 0);
  }

  void complete(OpId op, DoResult r) {
    auto it = ops.find(op);
    if (it == ops.end()) return;
    Callback cb = std::move(it->second.done);
    r.attempts = it->second.attempts;
    r.error = redact(r.error);
    if (!r.body.is_object()) r.body = json::object();  // callers may use body.value(...) freely
    ops.erase(it);
    if (cb) cb(std::move(r));  // last: the callback may destroy the client
  }

  void fail_later(OpId op, std::string error) {
    schedule(op, 0, [this, op, error = std::move(error)] {
      DoResult r;
      r.error = error;
      complete(op, std::move(r));
    });
  }

  double backoff_delay(const HttpResponse& r, int attempt) {
    const auto& p = options.retry;
    double d = std::min(p.max_delay_s, p.base_delay_s * std::pow(2.0, attempt - 1));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    d *= 1.0 + std::max(0.0, p.jitter) * u(rng);
    if (auto wait = server_wait(r)) d = std::max(d, std::min(*wait, p.max_server_wait_s));
    return std::max(0.0, d);
  }

  // One HTTP request (with retries when call->retry); `next` gets the final response.
  void attempt(OpId op, std::shared_ptr<const Call> call, int n, StepDone next) {
    auto it = ops.find(op);
    if (it == ops.end()) return;
    HttpRequest req;
    req.method = call->method;
    req.url = api_base + call->path;
    req.timeout_s = options.timeout_s;
    req.max_body_bytes = kDoMaxBodyBytes;  // a larger answer fails the transfer as it arrives
    req.headers = {"Authorization: Bearer " + token, "Accept: application/json",
                   "User-Agent: " + options.user_agent};
    if (!call->body.empty() || call->method == "POST") {
      req.headers.push_back("Content-Type: application/json");
      req.body = call->body;
    }
    ++it->second.attempts;
    const HttpClient::Id hid =
        http.send(std::move(req), [this, op, call, n, next](HttpResponse resp) {
          auto it = ops.find(op);
          if (it == ops.end()) return;
          it->second.http_id = 0;
          if (call->retry && n < options.retry.max_attempts && should_retry(resp)) {
            const double delay = backoff_delay(resp, n);
            const std::string reason =
                resp.error.empty() ? std::to_string(resp.status) : resp.error;
            log("retrying " + call->method + " " + call->path + " in " + format_seconds(delay) +
                " s (" + reason + ")");
            schedule(op, delay, [this, op, call, n, next] { attempt(op, call, n + 1, next); });
            return;
          }
          next(std::move(resp));
        });
    if (hid == 0) {
      fail_later(op, "DigitalOcean API: " + call->method + " " + call->path +
                         ": HTTP client is closed");
      return;
    }
    it->second.http_id = hid;
  }

  void request(OpId op, Call call, StepDone next) {
    attempt(op, std::make_shared<const Call>(std::move(call)), 1, std::move(next));
  }

  // Turns a final response into a result (not yet redacted: complete() does that).
  static DoResult to_result(const Call& call, HttpResponse& resp, bool retried_out) {
    DoResult r;
    r.status = resp.status;
    std::string refused;
    if (!resp.error.empty()) {
      r.error = "DigitalOcean API: " + call.method + " " + call.path + ": " + transport_error(resp);
    } else if (r.body = parse_body(resp.body, refused); !refused.empty()) {
      r.error = "DigitalOcean API: " + call.method + " " + call.path + ": the answer " + refused;
    } else {
      if (resp.status >= 200 && resp.status < 300) {
        r.ok = true;
        return r;
      }
      std::string message;
      if (r.body.is_object()) {
        if (auto id = r.body.find("id"); id != r.body.end() && id->is_string())
          r.error_id = id->get<std::string>();
        if (auto m = r.body.find("message"); m != r.body.end() && m->is_string())
          message = m->get<std::string>();
      }
      r.error = "DigitalOcean API: " + std::to_string(resp.status);
      if (!r.error_id.empty()) r.error += " " + r.error_id;
      if (!message.empty()) {
        r.error += ": " + message;
      } else if (!r.body.is_object() && !snippet(resp.body).empty()) {
        r.error += ": " + snippet(resp.body);
      } else {
        r.error += " (" + call.method + " " + call.path + ")";
      }
    }
    if (retried_out) r.error += " (gave up after retries)";
    return r;
  }

  bool retried_out(const Call& call, const HttpResponse& resp) const {
    return call.retry && options.retry.max_attempts > 1 && should_retry(resp);
  }

  OpId simple(std::string method, std::string path, Callback done, bool delete_404_ok = false) {
    const OpId op = start(std::move(done));
    Call call{method, path, "", true};
    request(op, call, [this, op, call, delete_404_ok](HttpResponse resp) {
      if (delete_404_ok && resp.error.empty() && resp.status == 404) {
        DoResult r;
        r.ok = true;
        r.status = 404;
        complete(op, std::move(r));
        return;
      }
      DoResult r = to_result(call, resp, retried_out(call, resp));
      if (r.ok && call.method == "GET" && !r.body.is_object()) {
        r.ok = false;
        r.error = "DigitalOcean API: " + std::to_string(resp.status) + " answer to GET " +
                  call.path + " is not a JSON object";
      }
      complete(op, std::move(r));
    });
    return op;
  }

  // What a listing gathers: the items kept, the pages asked for, and the estimated size of the
  // pages' documents whose items it keeps (an upper bound on what the items hold).
  struct Listing {
    json items = json::array();
    std::set<std::string> seen;
    std::size_t kept_tree_bytes = 0;
  };
  using Keep = std::function<bool(const json& item)>;

  // Fetches `path` and every page after it, concatenating the items of body[key] that `keep`
  // takes (all when it is empty). The items kept, with `kept_before` bytes of an earlier listing
  // of the same call, stay within kDoMaxListTreeBytes.
  void pages(OpId op, std::string path, std::string key, PagesDone next, Keep keep = {}, std::size_t kept_before = 0) {
    auto state = std::make_shared<Listing>();
    state->kept_tree_bytes = kept_before;
    auto step = std::make_shared<std::function<void(std::string)>>();
    // The function refers to itself only through a weak pointer (no cycle).
    std::weak_ptr<std::function<void(std::string)>> weak = step;
    *step = [this, op, key, next, state, weak, keep](std::string page_path) {
      auto self = weak.lock();
      state->seen.insert(page_path);
      Call call{"GET", page_path, "", true};
      request(op, call, [this, call, key, next, state, self, keep](HttpResponse resp) {
        DoResult r = to_result(call, resp, retried_out(call, resp));
        if (!r.ok) return next(std::move(r), nullptr, 0);
        if (!r.body.is_object() || !r.body.contains(key) || !r.body[key].is_array()) {
          r.ok = false;
          r.error = "DigitalOcean API: " + call.path + ": response has no \"" + key + "\" list";
          return next(std::move(r), nullptr, 0);
        }
        bool kept = false;
        for (auto& item : r.body[key]) {
          if (keep && !keep(item)) continue;
          state->items.push_back(std::move(item));
          kept = true;
        }
        if (kept && (state->kept_tree_bytes += json_tree_bytes(resp.body)) > kDoMaxListTreeBytes) {
          DoResult big;
          big.status = r.status;
          big.error = "DigitalOcean API: " + call.path + ": the \"" + key + "\" list would take more than " +
                      std::to_string(kDoMaxListTreeBytes >> 20) + " MiB once parsed (the limit on one listing)";
          return next(std::move(big), nullptr, 0);
        }
        const json* link = nullptr;
        if (auto l = r.body.find("links"); l != r.body.end() && l->is_object())
          if (auto p = l->find("pages"); p != l->end() && p->is_object())
            if (auto n = p->find("next"); n != p->end() && n->is_string()) link = &*n;
        if (!link) return next(std::nullopt, std::move(state->items), state->kept_tree_bytes);
        auto next_path = path_of_link(link->get<std::string>());
        if (!next_path || state->seen.count(*next_path) ||
            state->seen.size() >= static_cast<size_t>(kMaxPages)) {
          DoResult bad;
          bad.status = r.status;
          bad.error = "DigitalOcean API: " + call.path + ": unusable pagination link";
          return next(std::move(bad), nullptr, 0);
        }
        (*self)(*next_path);
      });
    };
    (*step)(std::move(path));
  }

  void cancel(OpId op) {
    auto it = ops.find(op);
    if (it == ops.end()) return;
    if (it->second.http_id) http.cancel(it->second.http_id);
    if (it->second.timer) close_retry_timer(it->second.timer);
    ops.erase(it);
  }
};

DoClient::DoClient(HttpClient& http, std::string api_base, std::string token,
                   DoClientOptions options)
    : impl_(std::make_unique<Impl>(http, std::move(api_base), std::move(token),
                                   std::move(options))) {}

DoClient::~DoClient() { cancel_all(); }

DoClient::OpId DoClient::create_droplet(const nlohmann::json& body, Callback done) {
  Impl& im = *impl_;
  const OpId op = im.start(std::move(done));
  std::string text;
  try {
    text = body.dump();
  } catch (const std::exception& e) {
    im.fail_later(op, std::string("DigitalOcean API: create droplet: bad request body: ") +
                          e.what());
    return op;
  }
  Impl::Call call{"POST", "/v2/droplets", std::move(text), false};  // never retried
  im.request(op, call, [&im, op, call](HttpResponse resp) {
    DoResult r = Impl::to_result(call, resp, false);
    if (!resp.error.empty()) {
      r.ambiguous = resp.ambiguous();
    } else if (resp.status >= 500 || (resp.status < 300 && !r.ok)) {
      r.ambiguous = true;  // a 2xx refused for its body (too deep) may still have created it
    } else if (r.ok) {
      const json& b = r.body;
      const bool has_id = b.is_object() && b.contains("droplet") && b["droplet"].is_object() &&
                          b["droplet"].contains("id") && b["droplet"]["id"].is_number_integer();
      if (!has_id) {
        r.ok = false;
        r.ambiguous = true;
        r.error = "DigitalOcean API: " + std::to_string(resp.status) +
                  " answer to create droplet without a droplet id";
      }
    }
    if (r.ambiguous) r.error += " (ambiguous: the droplet may exist)";
    im.complete(op, std::move(r));
  });
  return op;
}

DoClient::OpId DoClient::get_droplet(std::int64_t id, Callback done) {
  return impl_->simple("GET", "/v2/droplets/" + std::to_string(id), std::move(done));
}

DoClient::OpId DoClient::delete_droplet(std::int64_t id, Callback done) {
  return impl_->simple("DELETE", "/v2/droplets/" + std::to_string(id), std::move(done), true);
}

DoClient::OpId DoClient::get_account(Callback done) {
  return impl_->simple("GET", "/v2/account", std::move(done));
}

DoClient::OpId DoClient::create_key(const nlohmann::json& body, Callback done) {
  Impl& im = *impl_;
  const OpId op = im.start(std::move(done));
  Impl::Call call{"POST", "/v2/account/keys", body.dump(), false};  // never retried
  im.request(op, call, [&im, op, call](HttpResponse resp) { im.complete(op, Impl::to_result(call, resp, false)); });
  return op;
}

DoClient::OpId DoClient::get_key(const std::string& ident, Callback done) {
  return impl_->simple("GET", "/v2/account/keys/" + ident, std::move(done));
}

DoClient::OpId DoClient::delete_key(const std::string& ident, Callback done) {
  return impl_->simple("DELETE", "/v2/account/keys/" + ident, std::move(done), true);
}

DoClient::OpId DoClient::list_sizes(Callback done) {
  Impl& im = *impl_;
  const OpId op = im.start(std::move(done));
  im.pages(op, "/v2/sizes?per_page=200", "sizes",
           [&im, op](std::optional<DoResult> failure, nlohmann::json items, std::size_t) {
             if (failure) return im.complete(op, std::move(*failure));
             DoResult r;
             r.ok = true;
             r.status = 200;
             const auto n = items.size();
             r.body = {{"sizes", std::move(items)}, {"meta", {{"total", n}}}};
             im.complete(op, std::move(r));
           });
  return op;
}

DoClient::OpId DoClient::list_droplets(const std::string& tag, Callback done) {
  Impl& im = *impl_;
  const OpId op = im.start(std::move(done));
  // tag_name cannot be combined with type, so GPU droplets need their own listing.
  const std::string first = tag.empty() ? "/v2/droplets?per_page=200"
                                        : "/v2/droplets?tag_name=" + url_encode(tag) +
                                              "&per_page=200";
  // Every GPU droplet of the account is listed: only those with the tag are kept, page by page.
  auto tagged_with = [tag](const nlohmann::json& d) {
    if (tag.empty()) return true;
    if (!d.is_object() || !d.contains("tags") || !d["tags"].is_array()) return false;
    for (const auto& t : d["tags"])
      if (t.is_string() && t.get<std::string>() == tag) return true;
    return false;
  };
  im.pages(op, first, "droplets",
           [&im, op, tagged_with](std::optional<DoResult> failure, nlohmann::json tagged, std::size_t tagged_bytes) {
             if (failure) return im.complete(op, std::move(*failure));
             im.pages(op, "/v2/droplets?type=gpus&per_page=200", "droplets",
                      [&im, op, tagged = std::move(tagged)](
                          std::optional<DoResult> failure, nlohmann::json gpus, std::size_t) mutable {
                        if (failure) return im.complete(op, std::move(*failure));
                        nlohmann::json out = nlohmann::json::array();
                        std::set<std::string> seen;
                        auto add = [&](nlohmann::json& d) {
                          const std::string key =
                              d.is_object() && d.contains("id") ? d["id"].dump() : d.dump();
                          if (seen.insert(key).second) out.push_back(std::move(d));
                        };
                        for (auto& d : tagged) add(d);
                        for (auto& d : gpus) add(d);
                        DoResult r;
                        r.ok = true;
                        r.status = 200;
                        const auto n = out.size();
                        r.body = {{"droplets", std::move(out)}, {"meta", {{"total", n}}}};
                        im.complete(op, std::move(r));
                      },
                      tagged_with, tagged_bytes);
           });
  return op;
}

DoClient::OpId DoClient::create_resource(const std::string& collection, const std::string& item_key,
                                         const nlohmann::json& body, Callback done) {
  Impl& im = *impl_;
  const OpId op = im.start(std::move(done));
  Impl::Call call{"POST", collection, body.dump(), false};  // never retried
  im.request(op, call, [&im, op, call, item_key](HttpResponse resp) {
    DoResult r = Impl::to_result(call, resp, false);
    if (!resp.error.empty()) {
      r.ambiguous = resp.ambiguous();
    } else if (resp.status >= 500 || (resp.status < 300 && !r.ok)) {
      r.ambiguous = true;
    } else if (r.ok) {
      const json& b = r.body;
      const bool has_id = b.is_object() && b.contains(item_key) && b[item_key].is_object() &&
                          b[item_key].contains("id") && b[item_key]["id"].is_string() &&
                          !b[item_key]["id"].get<std::string>().empty();
      if (!has_id) {
        r.ok = false;
        r.ambiguous = true;
        r.error = "DigitalOcean API: " + std::to_string(resp.status) + " answer to POST " + call.path +
                  " without a " + item_key + " id";
      }
    }
    if (r.ambiguous) r.error += " (ambiguous: the " + item_key + " may exist)";
    im.complete(op, std::move(r));
  });
  return op;
}

DoClient::OpId DoClient::update_resource(const std::string& path, const nlohmann::json& body, Callback done) {
  Impl& im = *impl_;
  const OpId op = im.start(std::move(done));
  Impl::Call call{"PUT", path, body.dump(), true};  // PUT replaces: repeating it is harmless
  im.request(op, call, [&im, op, call](HttpResponse resp) {
    im.complete(op, Impl::to_result(call, resp, im.retried_out(call, resp)));
  });
  return op;
}

DoClient::OpId DoClient::get_resource(const std::string& path, Callback done) {
  return impl_->simple("GET", path, std::move(done));
}

DoClient::OpId DoClient::delete_resource(const std::string& path, Callback done) {
  return impl_->simple("DELETE", path, std::move(done), true);
}

DoClient::OpId DoClient::list_resources(const std::string& collection, const std::string& list_key, Callback done) {
  Impl& im = *impl_;
  const OpId op = im.start(std::move(done));
  im.pages(op, collection + "?per_page=200", list_key,
           [&im, op, list_key](std::optional<DoResult> failure, nlohmann::json items, std::size_t) {
             if (failure) return im.complete(op, std::move(*failure));
             DoResult r;
             r.ok = true;
             r.status = 200;
             const auto n = items.size();
             r.body = {{list_key, std::move(items)}, {"meta", {{"total", n}}}};
             im.complete(op, std::move(r));
           });
  return op;
}

DoClient::OpId DoClient::create_tag(const std::string& name, Callback done) {
  Impl& im = *impl_;
  const OpId op = im.start(std::move(done));
  Impl::Call call{"POST", "/v2/tags", nlohmann::json{{"name", name}}.dump(), true};  // idempotent at the API
  im.request(op, call, [&im, op, call](HttpResponse resp) {
    im.complete(op, Impl::to_result(call, resp, im.retried_out(call, resp)));
  });
  return op;
}

void DoClient::cancel(OpId op) { impl_->cancel(op); }

void DoClient::cancel_all() {
  while (!impl_->ops.empty()) impl_->cancel(impl_->ops.begin()->first);
}

std::size_t DoClient::pending() const { return impl_->ops.size(); }

const std::string& DoClient::api_base() const { return impl_->api_base; }

std::string DoClient::redact(std::string_view text) const { return impl_->redact(text); }

std::optional<std::string> load_do_token(std::string* source, const std::string& context) {
  for (const char* name : kCloudTokenEnvNames) {
    if (const char* v = std::getenv(name)) {
      const std::string value(trim(v));
      if (!value.empty()) {
        if (source) *source = name;
        return value;
      }
    }
  }
  std::string chosen = context;  // as doctl: --context, then $DIGITALOCEAN_CONTEXT, then the file's
  if (const char* env = std::getenv("DIGITALOCEAN_CONTEXT"); chosen.empty() && env && *env) chosen = env;
  std::vector<std::string> candidates;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
    candidates.push_back(std::string(xdg) + "/doctl/config.yaml");
  if (const char* home = std::getenv("HOME"); home && *home) {
    candidates.push_back(std::string(home) + "/.config/doctl/config.yaml");
#ifdef __APPLE__
    candidates.push_back(std::string(home) + "/Library/Application Support/doctl/config.yaml");
#endif
  }
  for (const auto& path : candidates) {
    std::ifstream in(path);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    if (auto token = doctl_config_token(text.str(), chosen)) {
      if (source) *source = path + (chosen.empty() ? "" : " (context " + chosen + ")");
      return token;
    }
  }
  return std::nullopt;
}

}  // namespace runara

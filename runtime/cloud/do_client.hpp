// DigitalOcean API v2 client on top of HttpClient (asynchronous, on the HttpClient's loop).
//
// Retries: GET and DELETE retry on transport errors, 429 and 5xx with exponential backoff plus
// jitter, waiting at least what `retry-after` / `ratelimit-reset` ask (capped). POST (create) is
// never retried: a failure that may have reached DigitalOcean (timeout or reset after sending, a
// 5xx, a 2xx without a droplet id) is reported with `ambiguous = true`, and the caller
// reconciles by listing the run's tag. DELETE answering 404 counts as success (already gone).
//
// Errors and log lines never contain the token (every string leaving the client is redacted).
// Callbacks run on the loop, at most once, never from inside the call that started the
// operation, and never after cancel() or destruction. The HttpClient must outlive the DoClient.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "curl/http_client.hpp"

namespace runara {

struct DoResult {
  bool ok = false;
  long status = 0;        // HTTP status of the last response (0: none arrived)
  nlohmann::json body;    // DigitalOcean's JSON object ({} if none or not an object, so
                          // body.value(...) is always safe); lists are merged across pages
                          // into {"droplets"|"sizes": [...], "meta": {"total": n}}; on an
                          // API error it is DigitalOcean's {"id", "message", "request_id"}
  std::string error;      // "" when ok, e.g. "DigitalOcean API: 422 unprocessable_entity: ..."
  std::string error_id;   // DigitalOcean's error "id" when it sent one
  bool ambiguous = false;  // create_droplet only: the droplet may exist; reconcile by tag
  int attempts = 0;        // HTTP requests made for this call (all pages and retries)
};

// What one client may hold of DigitalOcean's answers, whatever the API sends (a hostile or broken
// endpoint, RUNARA_DO_API_URL, or the fake one): one response's body, the JSON document parsed
// from it (estimated before it is built: json_tree_bytes, json_limits.hpp), and the documents of
// a listing's pages whose items it keeps. A page of 200 real droplets is about 1 MB of text and
// 6 MiB parsed; an answer past a bound fails its call, naming the bound.
inline constexpr std::size_t kDoMaxBodyBytes = std::size_t{4} << 20;
inline constexpr std::size_t kDoMaxTreeBytes = std::size_t{16} << 20;
inline constexpr std::size_t kDoMaxListTreeBytes = std::size_t{32} << 20;

struct DoRetryPolicy {
  int max_attempts = 6;             // per HTTP request, the first try included
  double base_delay_s = 1.0;        // backoff after attempt n: base * 2^(n-1) ...
  double max_delay_s = 30.0;        // ... capped here, then stretched by jitter
  double jitter = 0.25;             // random stretch factor in [1, 1 + jitter]
  double max_server_wait_s = 120.0;  // cap on waits asked by retry-after / ratelimit-reset
};

struct DoClientOptions {
  DoRetryPolicy retry;
  double timeout_s = 30;  // per HTTP request
  std::function<void(const std::string& line)> log;  // e.g. "retrying GET /v2/droplets/1 in 2.0 s (429)"
  std::string user_agent = "runara";
  std::uint64_t seed = 0;  // jitter RNG seed; 0 picks a random one
};

// The token from DIGITALOCEAN_TOKEN, else DIGITALOCEAN_ACCESS_TOKEN, else doctl's config
// ($XDG_CONFIG_HOME or ~/.config, /doctl/config.yaml) for the doctl context `context` (""
// means $DIGITALOCEAN_CONTEXT, else the file's `context:`; see cloud/doctl_config.hpp).
// `source` (optional) receives the variable name or file path it came from.
std::optional<std::string> load_do_token(std::string* source = nullptr, const std::string& context = "");

class DoClient {
 public:
  using Callback = std::function<void(DoResult)>;
  using OpId = std::uint64_t;
  static constexpr const char* kDefaultApiBase = "https://api.digitalocean.com";

  // api_base: scheme://host[:port] (a trailing slash is dropped); the caller reads
  // RUNARA_DO_API_URL. The token is only ever sent to api_base (pagination links are rebased).
  DoClient(HttpClient& http, std::string api_base, std::string token,
           DoClientOptions options = {});
  ~DoClient();  // cancels everything (no callbacks)
  DoClient(const DoClient&) = delete;
  DoClient& operator=(const DoClient&) = delete;

  OpId create_droplet(const nlohmann::json& body, Callback done);  // POST /v2/droplets
  OpId get_droplet(std::int64_t id, Callback done);                // 404: ok=false, status 404
  OpId delete_droplet(std::int64_t id, Callback done);             // 204 or 404: ok
  // Union of GET /v2/droplets?tag_name=TAG and GET /v2/droplets?type=gpus (the latter filtered
  // by TAG client-side), all pages, de-duplicated by id. An empty tag lists everything.
  OpId list_droplets(const std::string& tag, Callback done);
  OpId list_sizes(Callback done);   // all pages of GET /v2/sizes
  OpId get_account(Callback done);  // GET /v2/account
  // SSH keys. `ident` is the key's id or its fingerprint. POST is never retried (a second one
  // answers 422 "already in use"); callers that saw no answer look the key up by fingerprint.
  OpId create_key(const nlohmann::json& body, Callback done);  // POST /v2/account/keys
  OpId get_key(const std::string& ident, Callback done);      // 404: ok=false, status 404
  OpId delete_key(const std::string& ident, Callback done);   // 204 or 404: ok

  // Resources of resource_kinds.hpp (VPCs, firewalls), by collection path ("/v2/vpcs"). POST is
  // never retried: an answer that may hide a create (transport failure after sending, 5xx, a
  // 2xx without body[item_key].id) is `ambiguous`, and the caller looks the resource up by name.
  OpId create_resource(const std::string& collection, const std::string& item_key, const nlohmann::json& body,
                       Callback done);
  OpId update_resource(const std::string& path, const nlohmann::json& body, Callback done);  // PUT, retried
  OpId get_resource(const std::string& path, Callback done);     // 404: ok=false, status 404
  OpId delete_resource(const std::string& path, Callback done);  // 204 or 404: ok; 409 and the rest: not
  // Every page of GET collection (body[list_key] merged as for droplets).
  OpId list_resources(const std::string& collection, const std::string& list_key, Callback done);
  OpId create_tag(const std::string& name, Callback done);  // POST /v2/tags: the API answers 201 if it exists

  void cancel(OpId op);  // its callback will not run
  void cancel_all();
  std::size_t pending() const;
  const std::string& api_base() const;
  std::string redact(std::string_view text) const;  // replaces the token with "[REDACTED]"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace runara

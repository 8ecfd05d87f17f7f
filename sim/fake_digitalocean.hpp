// A fake DigitalOcean v2 API server for tests and the simulated cloud: Droplets (single and
// multiple create, list with GPU/tag/name filters and pagination, get, delete, delete by tag),
// sizes (regular and GPU), account, SSH keys, tags, actions, VPCs and firewalls, answering with the published
// OpenAPI description's shapes (shared/specs/digitalocean-openapi, DigitalOcean's published spec), rate-limit headers
// included. Serves 127.0.0.1 from its own threads (loopback_http_server.hpp), and injects the
// faults a client that must never leak a Droplet has to survive.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/simulated_droplet.hpp"

namespace runara::sim {

struct FakeDoConfig {
  // Required as "Authorization: Bearer <token>"; otherwise
  // 401 {"id":"Unauthorized","message":"Unable to authenticate you"}.
  std::string token = "test-token";
  double active_after_s = 0.5;  // "new" -> "active"; networks.v4 (public + private) appear then
  double delete_after_s = 0.5;  // after DELETE (204) GET still answers ("off") until this passes, then 404
  int per_page_default = 20;    // collections: `per_page` default (max 200)
  double latency_s = 0;         // every response is held back this long (after the request took effect)

  int droplet_limit = 25;  // GET /v2/account droplet_limit; creates beyond it answer 422
  // GET /v2/account uuid (the spec's example by default); tests give two fakes two accounts.
  std::string account_uuid = "b6fr89dbf6d9156cace5f3c78dc9851d957381ef";
  // Real limits: 5000 requests/hour, 250/minute (429 with retry-after), 10 GET /v2/account/keys
  // per minute. Turn off for long accelerated simulations that poll faster than a real client may.
  bool enforce_rate_limits = true;
  int rate_limit_per_hour = 5000;
  int rate_limit_per_minute = 250;
  // Behaviour reported of the real API: DELETE of a Droplet still "new" answers
  // 422 "Droplet already has a pending event." (and delete-by-tag skips it).
  bool reject_delete_while_new = false;
  // Public IPv4 for a Droplet id (e.g. 127.0.0.x for a simulated cloud). Empty: TEST-NET addresses.
  // Called with the fake's lock held: it must not call back into the fake.
  std::function<std::string(std::int64_t droplet_id)> public_ipv4;
  // The simulated cloud (runara --sim): told when a Droplet is created and when it is DELETEd
  // (or vanished), so a real machine (an sshd) can stand behind it. Called with the fake's lock
  // held, on the server's thread: must not call back into the fake, and should be quick.
  std::function<void(const SimulatedDroplet&)> on_created;
  std::function<void(std::int64_t droplet_id)> on_deleted;
  // The simulated cloud's VPC fabric: after every request that changed the account (a 2xx answer
  // to anything but GET), the account's Droplets and firewalls now. Same rules as on_created.
  std::function<void(const SimulatedNetwork&)> on_network_changed;
  // Every region starts with its default VPC ("default-<region>", 10.116.x.0/20, never deletable)
  // as in an account that has used the regions. false: a region has none until its first VPC is
  // made, which becomes the default and so cannot be deleted (the spec's trap), or a Droplet is
  // created there without vpc_uuid.
  bool default_vpcs = true;
  double firewall_apply_s = 0.5;  // after each change a firewall is "waiting" this long, then "succeeded"
  // false: the account may not use 8-GPU sizes (gpu-*x8-*, the nodes of multi-node GPU clusters),
  // which DigitalOcean enables per account on request: their creates answer 422
  // unprocessable_entity "This size is currently restricted ..." (the API's wording for a size the
  // account may not use, digitalocean/api-v2 issue 36; its wording for 8-GPU sizes today is assumed
  // to be the same, not recorded).
  bool multi_node_gpus = true;
};

class FakeDigitalOcean {
 public:
  explicit FakeDigitalOcean(FakeDoConfig cfg = {});
  ~FakeDigitalOcean();  // stops the server thread
  FakeDigitalOcean(const FakeDigitalOcean&) = delete;
  FakeDigitalOcean& operator=(const FakeDigitalOcean&) = delete;

  // Binds 127.0.0.1:port (0: an ephemeral port) and serves on a thread. Returns the bound port;
  // throws std::runtime_error when the port cannot be bound or the server is already started.
  int start(int port = 0);
  void stop();  // idempotent; the destructor calls it
  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT"

  // Fault injection (thread-safe, may be called while running).
  // The next `count` requests (any endpoint) answer `status`: 429 {"id":"too_many_requests",...}
  // with ratelimit-remaining 0 and, when given, retry-after; 500 {"id":"server_error",...};
  // 502/503/504 an HTML gateway page, as a proxy in front of the API answers.
  void fail_next(int count, int status, std::optional<int> retry_after_s = {});
  // The same for the next `count` POST /v2/droplets only (other requests pass before them).
  void fail_next_create(int count, int status);
  // The same for requests matching `request`: "METHOD /path" without the query, exactly, or a
  // prefix when it ends in '*' ("POST /v2/vpcs", "DELETE /v2/firewalls/*"). The failing request
  // has no effect. Failures are served in order: one waiting for its request holds back the rest.
  void fail_next_matching(const std::string& request, int count, int status);
  // The next successful POST /v2/droplets creates its Droplet(s), then closes the connection
  // without answering.
  void drop_next_create_response();
  // A lost answer for any endpoint: the next request matching `request` (as above) that succeeds
  // (2xx) takes effect, then the connection is closed without an answer. Each call drops one.
  void drop_next_response(const std::string& request);
  // The next Droplet created stays "new" and disappears (404, its create action "errored") after
  // `after_s`, as a GPU Droplet does when placement fails.
  void vanish_next_create(double after_s);
  void set_latency(double seconds);
  // true: the port refuses connections and open connections are closed without an answer.
  // false: serves again on the same port (throws std::runtime_error if it was taken meanwhile).
  void set_unreachable(bool unreachable);

  // Inspection for tests.
  int live_droplets() const;      // created and not DELETEd (and not vanished)
  int existing_droplets() const;  // still answering GET, delete-pending ones included
  int creates() const;            // Droplets ever created
  std::vector<nlohmann::json> droplets() const;  // every Droplet still answering GET (GPU too)
  // Requests received whose "METHOD /path?query" starts with the prefix, e.g.
  // requests("DELETE /v2/droplets"). Counts every request that reached the server.
  int requests(const std::string& method_and_path_prefix) const;
  std::vector<std::string> request_log() const;       // "METHOD /path?query", in arrival order
  std::vector<nlohmann::json> keys() const;           // the account's SSH keys now
  std::vector<nlohmann::json> create_bodies() const;  // the body of each POST /v2/droplets
  std::vector<nlohmann::json> vpcs() const;           // every VPC, as GET /v2/vpcs shows it
  std::vector<nlohmann::json> firewalls() const;      // every firewall, as GET /v2/firewalls shows it
  // Registers a key as a user's own would be (not runara's): tests of what teardown must not touch.
  void add_key(const std::string& name, const std::string& public_key);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace runara::sim

// The run's private network: its VPC (one of its own, or an existing one of the account, used
// and never deleted) and its cloud firewall, created with the same promise as a droplet.
//
// Every create is written to the ledger (generic resources table, resource_kinds.hpp) before
// its POST, after the guardian is running; an answer that may hide a create (lost, 5xx) is
// reconciled by listing the collection by the resource's name (runara-<run id>-vpc / -fw): found,
// it is adopted; not shown after a few listings, the row is marked create_failed (the API
// creates VPCs and firewalls before it answers, so a listing after the answer shows them).
// Nothing here deletes: teardown is RunCleanup's (network_cleanup.hpp), on every ending.
//
// A VPC of the run's own is only made in a region that has its default VPC already: the API makes
// the first VPC of a region the default, and never deletes a default VPC.
//
// The firewall applies to the run's tag (runara:run-<id>), which is made first (POST /v2/tags;
// the API refuses a firewall naming a tag that does not exist). A second droplet.firewall
// replaces the rules (PUT).
//
// Contract: loop thread only; the DoClient and Ledger outlive it; callbacks run on the loop,
// never from inside the call that started them.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <uv.h>

#include "base/delayed_calls.hpp"
#include "base/result.hpp"
#include "cloud/do_client.hpp"
#include "cloud/ledger.hpp"
#include "cloud/resource_kinds.hpp"

namespace runara {

struct VpcRequest {
  std::string region, ip_range;  // ip_range "" lets the API choose
  std::string existing;          // the name of an account VPC to use instead (never deleted)
};

struct VpcInfo {
  std::string id, name, region, ip_range;
  bool owned = false;  // created by this run (and so deleted at its end)
};

struct FirewallRequest {
  std::vector<std::string> ports, sources;
};

struct FirewallInfo {
  std::string id, name;
  std::vector<std::string> ports, sources;
};

// What a script asks for, checked before anything is sent: a region; ip_range an IPv4 CIDR
// block with a prefix of 16 to 28 (the sizes DigitalOcean allows); existing a VPC name.
Status check_vpc_request(const VpcRequest& request);

class NetworkResources {
 public:
  struct Setup {
    uv_loop_t* loop = nullptr;
    DoClient* client = nullptr;
    Ledger* ledger = nullptr;
    std::string run_id, api_base;
    double poll_s = 3;
    std::function<Status()> ensure_guardian;  // before the first intent
    std::function<void(const std::string&)> log;
    std::function<void()> settled;  // a create finished (teardown waits for those in flight)
  };
  explicit NetworkResources(Setup setup);
  ~NetworkResources();
  NetworkResources(const NetworkResources&) = delete;
  NetworkResources& operator=(const NetworkResources&) = delete;

  // `account`: the token's account uuid, recorded with each row.
  void vpc(VpcRequest request, const std::string& account, std::function<void(Result<VpcInfo>)> done);
  void firewall(FirewallRequest request, const std::string& account, std::function<void(Result<FirewallInfo>)> done);
  // The region of a VPC this run created or looked up ("" when it does not know the id).
  std::string vpc_region(const std::string& id) const;
  int in_flight() const { return in_flight_; }
  void stop();  // the run is ending: no new create is started

 private:
  using Made = std::function<void(Result<nlohmann::json>)>;
  void use_existing(VpcRequest request, std::function<void(Result<VpcInfo>)> done);
  void create_vpc(const VpcRequest& request, const std::string& account, std::function<void(Result<VpcInfo>)> done);
  void create_named(const ResourceKind& kind, const std::string& region, const std::string& account,
                    nlohmann::json body, Made done);
  void reconcile(const ResourceKind& kind, const std::string& name, std::string why, int tries, Made done);
  void adopt(const ResourceKind& kind, const std::string& name, const nlohmann::json& item, Made done);
  void settle_one();
  std::string tag() const { return "runara:run-" + setup_.run_id; }

  Setup setup_;
  DelayedCalls delayed_;
  std::optional<VpcInfo> own_vpc_;
  std::optional<FirewallInfo> firewall_;
  std::map<std::string, std::string> vpc_regions_;  // id -> region, of every VPC the run saw
  bool vpc_busy_ = false, firewall_busy_ = false;
  bool stopping_ = false;
  int in_flight_ = 0;
  std::vector<DoClient::OpId> ops_;
};

}  // namespace runara

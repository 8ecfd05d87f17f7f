// The run's VPC and firewall, created with the ledger's promise; see network_resources.hpp.
#include "cloud/network_resources.hpp"

#include <cctype>

#include "base/text.hpp"
#include "cloud/firewall_rules.hpp"
#include "cloud/ownership.hpp"

namespace runara {

namespace {

constexpr int kReconcileListings = 3;

const ResourceKind& kind_named(std::string_view name) { return *find_resource_kind(name); }

VpcInfo vpc_info(const nlohmann::json& vpc, bool owned) {
  return {json_text(vpc, "id"), json_text(vpc, "name"), json_text(vpc, "region"), json_text(vpc, "ip_range"), owned};
}

}  // namespace

Status check_vpc_request(const VpcRequest& request) {
  if (request.region.empty()) return Error{"option 'region' is required (e.g. region = \"atl1\")"};
  if (!request.existing.empty() && !request.ip_range.empty()) {
    return Error{"options 'existing' and 'ip_range' exclude each other: an existing VPC keeps its own range"};
  }
  if (request.existing.size() > 255) return Error{"option 'existing' is longer than a VPC name may be (255)"};
  if (request.ip_range.empty()) return {};
  const auto slash = request.ip_range.find('/');
  const std::string prefix = slash == std::string::npos ? "" : request.ip_range.substr(slash + 1);
  const bool digits = prefix.size() == 2 && std::isdigit(static_cast<unsigned char>(prefix[0])) &&
                      std::isdigit(static_cast<unsigned char>(prefix[1]));
  const bool prefix_ok = digits && std::stoi(prefix) >= 16 && std::stoi(prefix) <= 28;
  const bool address_ok = slash != std::string::npos && check_firewall_source(request.ip_range.substr(0, slash), 1).ok() &&
                          request.ip_range.find(':') == std::string::npos;
  if (address_ok && prefix_ok) return {};
  return Error{"option 'ip_range': '" + request.ip_range +
               "' is not an IPv4 CIDR block with a prefix from /16 to /28 (e.g. \"10.200.0.0/24\")"};
}

NetworkResources::NetworkResources(Setup setup) : setup_(std::move(setup)), delayed_(setup_.loop) {}

NetworkResources::~NetworkResources() {
  for (DoClient::OpId op : ops_) setup_.client->cancel(op);
  delayed_.cancel_all();
}

// Creates already sent go on to their answer (or reconciliation): teardown waits for them, as a
// cancelled POST could still land after teardown looked.
void NetworkResources::stop() { stopping_ = true; }

std::string NetworkResources::vpc_region(const std::string& id) const {
  auto it = vpc_regions_.find(id);
  return it == vpc_regions_.end() ? "" : it->second;
}

void NetworkResources::vpc(VpcRequest request, const std::string& account, std::function<void(Result<VpcInfo>)> done) {
  if (stopping_) return done(Error{"the run is ending"});
  if (Status valid = check_vpc_request(request); !valid) return done(Error{valid.error()});
  if (!request.existing.empty()) return use_existing(std::move(request), std::move(done));
  if (own_vpc_) {
    if (own_vpc_->region != request.region) {
      return done(Error{"the run already has its VPC " + own_vpc_->name + " in region '" + own_vpc_->region +
                        "'; a run makes one VPC of its own (use existing = NAME, granted with --allow-vpc NAME, for another)"});
    }
    if (!request.ip_range.empty() && request.ip_range != own_vpc_->ip_range) {
      return done(Error{"the run's VPC " + own_vpc_->name + " has ip_range " + own_vpc_->ip_range + ", not " +
                        request.ip_range});
    }
    return done(*own_vpc_);
  }
  if (vpc_busy_) return done(Error{"the run's VPC is being created by another task; wait for that call"});
  vpc_busy_ = true;
  // The first VPC of a region becomes its default, which the API never deletes (403): a run
  // would leave it behind. Only a region that has its default already gets one of the run's.
  ops_.push_back(setup_.client->list_resources("/v2/vpcs", "vpcs", [this, request, account, done](DoResult listed) {
    if (!listed.ok) {
      vpc_busy_ = false;
      return done(Error{"cannot list the account's VPCs: " + listed.error});
    }
    for (const auto& vpc : listed.body.value("vpcs", nlohmann::json::array())) {
      const bool is_default = vpc.is_object() && vpc.value("default", nlohmann::json()) == true;
      if (is_default && json_text(vpc, "region") == request.region) return create_vpc(request, account, done);
    }
    vpc_busy_ = false;
    done(Error{"region '" + request.region + "' has no VPC of the account yet: DigitalOcean makes the first VPC of a "
               "region its default, which cannot be deleted, so the run would leave it behind. Create the region's "
               "default VPC first (control panel or `doctl vpcs create`), or use existing = NAME (granted with --allow-vpc NAME)"});
  }));
}

void NetworkResources::create_vpc(const VpcRequest& request, const std::string& account,
                                  std::function<void(Result<VpcInfo>)> done) {
  const ResourceKind& kind = kind_named("vpc");
  nlohmann::json body = {{"name", resource_name(kind, setup_.run_id)},
                         {"region", request.region},
                         {"description", "runara run " + setup_.run_id + " (deleted when the run ends)"}};
  if (!request.ip_range.empty()) body["ip_range"] = request.ip_range;
  create_named(kind, request.region, account, body, [this, done](Result<nlohmann::json> made) {
    vpc_busy_ = false;
    if (!made) return done(Error{made.error()});
    VpcInfo info = vpc_info(*made, true);
    vpc_regions_[info.id] = info.region;
    own_vpc_ = info;
    setup_.log("VPC " + info.name + " (" + info.id + ", " + info.ip_range + ") created in " + info.region);
    done(info);
  });
}

// An account VPC by name: used as it is, never recorded as the run's, never deleted.
void NetworkResources::use_existing(VpcRequest request, std::function<void(Result<VpcInfo>)> done) {
  ops_.push_back(setup_.client->list_resources("/v2/vpcs", "vpcs", [this, request, done](DoResult result) {
    if (!result.ok) return done(Error{"cannot list the account's VPCs: " + result.error});
    std::string names;
    for (const auto& vpc : result.body.value("vpcs", nlohmann::json::array())) {
      const std::string name = json_text(vpc, "name");
      if (name != request.existing) {
        if (names.size() < 300) names += (names.empty() ? "" : ", ") + name;
        continue;
      }
      VpcInfo info = vpc_info(vpc, false);
      if (info.region != request.region) {
        return done(Error{"the VPC '" + name + "' is in region '" + info.region + "', not '" + request.region +
                          "': a droplet joins a VPC of its own region"});
      }
      vpc_regions_[info.id] = info.region;
      return done(info);
    }
    done(Error{"the account has no VPC named '" + request.existing + "' (it has: " + (names.empty() ? "none" : names) +
               ")"});
  }));
}

void NetworkResources::firewall(FirewallRequest request, const std::string& account,
                                std::function<void(Result<FirewallInfo>)> done) {
  if (stopping_) return done(Error{"the run is ending"});
  if (Status valid = check_firewall_lists(request.ports, request.sources); !valid) return done(Error{valid.error()});
  if (firewall_busy_) return done(Error{"the run's firewall is being changed by another task; wait for that call"});
  firewall_busy_ = true;
  const ResourceKind& kind = kind_named("firewall");
  const nlohmann::json body = firewall_body(resource_name(kind, setup_.run_id), tag(), request.ports, request.sources);
  auto finish = [this, request, done](Result<nlohmann::json> made) {
    firewall_busy_ = false;
    if (!made) return done(Error{made.error()});
    firewall_ = FirewallInfo{json_text(*made, "id"), json_text(*made, "name"), request.ports, request.sources};
    done(*firewall_);
  };
  if (firewall_) {  // a second call replaces the rules
    ops_.push_back(setup_.client->update_resource(
        "/v2/firewalls/" + url_encode(firewall_->id), body, [this, finish](DoResult result) {
          if (!result.ok) return finish(Error{"cannot change the run's firewall: " + result.error});
          setup_.log("firewall " + firewall_->name + ": rules replaced");
          finish(result.body.value("firewall", nlohmann::json::object()));
        }));
    return;
  }
  // The API refuses a firewall that names a tag that does not exist yet.
  ops_.push_back(setup_.client->create_tag(tag(), [this, kind = &kind, account, body, finish](DoResult result) {
    if (!result.ok) return finish(Error{"cannot create the run's tag " + tag() + ": " + result.error});
    create_named(*kind, "", account, body, [this, finish](Result<nlohmann::json> made) {
      if (made) setup_.log("firewall " + json_text(*made, "name") + " (" + json_text(*made, "id") + ") created");
      finish(std::move(made));
    });
  }));
}

// Ledger first, then the POST; an answer that may hide a create is looked up by name.
void NetworkResources::create_named(const ResourceKind& kind, const std::string& region, const std::string& account,
                                    nlohmann::json body, Made done) {
  const std::string name = body.value("name", "");
  // The run may have begun to end while the tag was made: teardown has looked already.
  if (stopping_) return done(Error{"the run is ending"});
  if (Status guardian = setup_.ensure_guardian(); !guardian) {
    return done(Error{guardian.error() + "; nothing is created without a guardian"});
  }
  try {
    LedgerResource row;
    row.kind = std::string(kind.kind);
    row.name = name;
    row.run_id = setup_.run_id;
    row.api_base = setup_.api_base;
    row.account = account;
    row.region = region;
    setup_.ledger->record_resource_intent(row);
  } catch (const std::exception& e) {
    return done(Error{std::string("cannot record the create in the ledger: ") + e.what()});
  }
  ++in_flight_;
  setup_.log("creating " + std::string(kind.kind) + " " + name);
  const std::string item_key(kind.item_key);
  ops_.push_back(setup_.client->create_resource(
      std::string(kind.collection), item_key, body, [this, &kind, name, item_key, done](DoResult result) {
        if (result.ok) return adopt(kind, name, result.body.value(item_key, nlohmann::json::object()), done);
        if (result.ambiguous) return reconcile(kind, name, result.error, 0, done);
        setup_.ledger->mark_resource(std::string(kind.kind), name, ResourceState::create_failed);
        settle_one();
        done(Error{"DigitalOcean refused to create " + std::string(kind.kind) + " " + name + ": " + result.error});
      }));
}

void NetworkResources::reconcile(const ResourceKind& kind, const std::string& name, std::string why, int tries,
                                 Made done) {
  if (tries == 0) {
    setup_.log("the create of " + std::string(kind.kind) + " " + name + " ended ambiguously (" + why +
               "); looking for it by name");
  }
  ops_.push_back(setup_.client->list_resources(
      std::string(kind.collection), std::string(kind.list_key), [this, &kind, name, why, tries, done](DoResult result) {
        if (result.ok) {
          for (const auto& item : result.body.value(std::string(kind.list_key), nlohmann::json::array())) {
            if (json_text(item, "name") == name) return adopt(kind, name, item, done);
          }
        }
        if (tries + 1 < kReconcileListings) {
          return delayed_.after(setup_.poll_s, [this, &kind, name, why, tries, done] {
            reconcile(kind, name, why, tries + 1, done);
          });
        }
        // A listing that worked and does not show it: the create did not happen. A listing that
        // failed proves nothing: the row stays open, and teardown looks for it by name again.
        if (result.ok) setup_.ledger->mark_resource(std::string(kind.kind), name, ResourceState::create_failed);
        settle_one();
        done(Error{"the create of " + std::string(kind.kind) + " " + name + " failed (" + why +
                   ") and it does not show up in " + std::string(kind.collection)});
      }));
}

void NetworkResources::adopt(const ResourceKind& kind, const std::string& name, const nlohmann::json& item, Made done) {
  const std::string id = json_text(item, "id");
  setup_.ledger->record_resource_id(std::string(kind.kind), name, id);
  settle_one();
  done(item);
}

void NetworkResources::settle_one() {
  --in_flight_;
  if (setup_.settled) setup_.settled();
}

}  // namespace runara

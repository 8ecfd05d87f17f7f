// The kinds of cloud resource the ledger's generic `cloud_resources` table holds (droplets and
// the run's SSH keys keep their own tables), described in one place: how the API names their
// collection and JSON keys, and the order teardown takes them in. Adding the next kind (a
// volume, a reserved IP) is one entry here plus the code that creates it.
//
// Teardown rank: every droplet is gone before any rank-1 resource is deleted, and every rank-1
// one before rank 2 (the API refuses to delete a VPC that still has members).
//
// Pure data; any thread.
#pragma once

#include <string_view>
#include <vector>

namespace runara {

struct ResourceKind {
  std::string_view kind;        // the ledger's and `runara ls`'s word: "firewall", "vpc"
  std::string_view collection;  // API path: "/v2/firewalls"
  std::string_view item_key;    // the object in a single answer: {"firewall": {...}}
  std::string_view list_key;    // the array in a listing: {"firewalls": [...]}
  std::string_view name_suffix;  // the run's resource is named "runara-<run id>-<suffix>"
  int teardown_rank = 1;
  // A DELETE answering 409 means "not yet" (members still leaving), retried with backoff.
  bool conflict_means_wait = false;
};

const std::vector<ResourceKind>& resource_kinds();  // in teardown order
const ResourceKind* find_resource_kind(std::string_view kind);  // nullptr when unknown
// "runara-<run id>-<suffix>": the only name a run's resource of that kind may have.
std::string resource_name(const ResourceKind& kind, std::string_view run_id);

}  // namespace runara

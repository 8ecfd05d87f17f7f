// What earlier runs left on one API endpoint, as that API says now: the question behind
// `runara ls` and `runara reap`.
//
// The ledger says what runara created through this endpoint; the account's `runara` tag
// catches creates the ledger has no id for. Each ledger row is checked against the API (the
// listing, else GET): a 404 closes the row (destroyed), a droplet without the run's tag is
// reported as not runara's, and a row the API could not be asked about says so. The runs' own
// SSH keys are rows too (kind "ssh_key"), each checked with one GET by fingerprint, and so are
// their VPCs and firewalls (kinds "vpc", "firewall": resource_kinds.hpp), each checked with one
// GET by id. Rows recorded
// at another endpoint or under another account are counted in `elsewhere`, never shown as
// leftovers here. Without a token, or when the API cannot be asked, `error` says why and the
// rows carry the ledger's word, marked unchecked: never an all-clear.
//
// Blocking (ApiSession): for the command-line tools only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cloud/api_session.hpp"
#include "cloud/ledger.hpp"

namespace runara {

struct Leftover {
  std::string kind = "droplet";  // or "ssh_key" (the run's own key, registered with the account), "vpc", "firewall"
  std::string remote_id;         // vpc, firewall: the API's id (a UUID); "" when none is known
  std::string run_id, name, size, region;
  std::string ip;               // public IPv4 of a droplet the API showed
  std::string private_key_path;  // ssh_key: the run's private key file (0600, state folder)
  std::string status;       // the API's ("active", "new", "off"...), or what stands in for it
  std::string source;       // "ledger" or "account tag"
  std::int64_t id = 0;      // 0: no id known (a create whose answer never came)
  double created_at = 0;    // unix seconds
  std::optional<double> price_hourly;
  bool checked = false;     // status is the API's answer
  bool foreign = false;     // the API shows this id without the run's tag: not runara's
};

struct Survey {
  std::string api_base;
  std::string account;              // the token's account uuid ("" if not known)
  std::vector<Leftover> rows;
  std::vector<std::string> elsewhere;  // "2 at https://api.example (another API endpoint)"
  std::string error;                // why the API could not be (fully) checked; "" = checked
};

// A droplet the API listed, as a row of `source` "account tag" (its run from its run tag).
Leftover leftover_from_api(const nlohmann::json& droplet);

// session: nullptr when there is no token (the survey then reads only the ledger).
Survey survey_leftovers(Ledger& ledger, const std::string& api_base, ApiSession* session);

}  // namespace runara

// What proves that a cloud resource is a run's own, checked on the API's current answer before
// anything other than the run's own fresh create is destroyed (reap, the guardian, teardown of
// an inherited ledger entry). An id alone proves nothing: another endpoint or account may have
// handed the same id to someone else's resource.
//
// - A droplet is the run's if its tags hold the run's tag `runara:run-<id>` (scripts cannot set
//   `runara:` tags, see droplet_names.hpp).
// - An SSH key (when the ledger records keys) is the run's if both its name and its fingerprint
//   are the ones recorded for the run.
//
// - A VPC or firewall (resource_kinds.hpp) is the run's if the API's object has the name the
//   ledger recorded for it (runara-<run id>-vpc / -fw: names are unique per account for VPCs,
//   and a run id is random), and, for a firewall, the run's tag among its tags.
//
// Pure functions over the API's JSON: any thread, no I/O. Ok means owned; otherwise the error is
// the reason to report (never to delete).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/result.hpp"

namespace runara {

Status check_droplet_owned(const nlohmann::json& droplet, const std::string& run_tag);
Status check_resource_owned(const nlohmann::json& item, const std::string& kind, const std::string& name,
                            const std::string& run_tag);
// obj[key] when obj is an object and that is a string, else "": the API's text, read without
// trusting its shape.
std::string json_text(const nlohmann::json& obj, const char* key);
Status check_key_owned(const nlohmann::json& key, const std::string& name, const std::string& fingerprint);

}  // namespace runara

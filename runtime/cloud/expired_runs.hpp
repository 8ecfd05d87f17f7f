// Which runs are over by their droplets' own deadline tags: the question behind
// `runara reap --expired`, asked on the account's listing of droplets tagged `runara`, by any
// machine, without the ledger of the computer that started them (docs/controller_loss.md).
//
// A run is expired when it has at least one listed droplet and every listed droplet carrying its
// run tag `runara:run-<id>` has a deadline tag (deadline_tag.hpp) whose time, plus `grace_s`
// (for clocks that disagree), is before `now`. Anything else is left alone and said why, droplet
// by droplet:
// - a droplet without a run tag: not runara's run (never deleted here, whatever other tags);
// - a droplet of a run without a deadline tag (an earlier runara made it, or a tag went missing):
//   only `runara reap --older-than` or `--run` may judge it, by a person;
// - a droplet whose deadline has not passed, and with it every other droplet of its run: a run
//   is reaped whole or not at all, so a run in progress never loses a machine to this.
// `only_run` ("" for all) restricts the answer to one run.
//
// Pure function over the API's JSON and a time: any thread, no I/O, no clock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace runara {

struct ExpiredDroplet {
  nlohmann::json droplet;  // the API's view, as listed
  std::string run_id;      // "" when it has no run tag
  std::optional<double> deadline;
  std::string why_kept;    // "" when it is to be reaped; else the reason, one line
};

struct ExpiredSelection {
  std::vector<ExpiredDroplet> reap;  // every droplet of every expired run
  std::vector<ExpiredDroplet> kept;  // the rest, each with why_kept
};

ExpiredSelection select_expired(const nlohmann::json& listed_droplets, double now, double grace_s,
                                const std::string& only_run = "");

}  // namespace runara

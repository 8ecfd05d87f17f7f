// A droplet's deadline, carried on the droplet itself as a tag, so that any machine with a token
// for the account can tell that a run is over even when the computer that started it (and its
// guardian, which lives there too) is gone: `runara reap --expired` (docs/controller_loss.md).
//
// The tag is `runara:deadline-<unix seconds>`: the latest moment the run could still be using
// the droplet — the run's hard deadline (--max-runtime, or an earlier watchdog.limit) plus the
// runtime's teardown allowance. The runtime's watchdog only ever moves a run's deadline earlier,
// never later (Runtime::Impl::set_run_deadline), so a droplet created later in a run carries the
// same or an earlier deadline than one created before it, and a passed deadline on any droplet of
// a run means the whole run has ended. It is set in the create's body with the run tag; scripts
// cannot set `runara:` tags (droplet_names.hpp), so it is runara's word, not the script's.
//
// Valid as a DigitalOcean tag: letters, digits, ':' and '-', far below 255 characters
// (shared/specs/digitalocean-openapi/specification/resources/tags/models/tags.yml, `name`).
//
// Pure functions over numbers and the API's JSON: any thread, no I/O, no clock.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace runara {

constexpr std::string_view kDeadlineTagPrefix = "runara:deadline-";
// The time a run's teardown may take after its hard deadline (the runtime's teardown budget):
// the guardian's own deadline has the same allowance.
constexpr double kTeardownAllowanceS = 300;

// "runara:deadline-<seconds>", rounded up (a deadline is never made earlier by rounding).
std::string deadline_tag(double unix_seconds);
// The deadline a tag states, or nullopt when `tag` is not a well-formed deadline tag (only
// digits after the prefix, at most 12 of them: no overflow, no sign, no exponent).
std::optional<double> parse_deadline_tag(std::string_view tag);
// A droplet's deadline from its `tags` (the API's JSON, shape not trusted): nullopt when it
// has none. Several deadline tags (none of runara's making) count as the latest of them: an
// expiry is never brought forward by an extra tag.
std::optional<double> droplet_deadline(const nlohmann::json& droplet);

}  // namespace runara

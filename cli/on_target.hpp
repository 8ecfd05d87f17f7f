// `--on`: the one flag that points a scenario at a machine or server the run did not create
// and grants exactly what reaching it needs. Parsed here; the script reads it as `runara.on`
// and the stdlib (runara.scenario) acts on it. Pure string work: nothing is contacted.
#pragma once

#include <string>

#include "runara/runtime.hpp"

namespace runara::cli {

// "USER@HOST[:PORT]" (a machine over ssh) or "http(s)://HOST[:PORT][/PATH]" (a running
// OpenAI-compatible server). Once each. Returns "" or a usage error.
std::string parse_on_option(const std::string& text, OnTarget& into);

// What --on implies: the machine's ssh address granted (and the run's secrets may go there,
// as to a droplet of the run: it runs the scenario's server); the endpoint's host:port granted.
void grant_on_targets(Options& options);

}  // namespace runara::cli

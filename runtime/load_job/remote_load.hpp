// One load point run by the remote load agent (agent/) on another machine, as a LoadRunner: the
// agent is started on a CommandTarget (an ssh session), the round trip to it is timed with three
// pings, the spec is sent, and its lines come back through agent_protocol.hpp: progress to the
// run's progress line, each request record to requests.jsonl as it arrives, and at the end the
// agent's own statistics, which become the LoadOutcome a local engine would have given.
//
// What runara holds for the load (the statistics rebuilt from records, input/output lengths) is
// reserved from the run's memory budget when the point starts, as the local engine does. The
// agent is trusted no further than the protocol's checks: every record and the outcome must be
// possible for the spec (agent_protocol.hpp: admit_record, check_outcome), and requests.jsonl
// gets what `record` chose of its records, up to max_request_lines, as a local load's does.
//
// When the agent cannot finish (killed, the connection lost, a broken line, the run stopping),
// the outcome is rebuilt from the records received so far (no ITL: token gaps travel only in
// the final statistics) with the error saying what happened. Killing: destroying the Running
// handle signals the agent's process group and closes its stdin, either of which stops it.
//
// Contract. Threading: the run's loop thread only (CommandTarget's). Ownership: owns the
// Running handle (CommandTarget's rules make it safe to outlive its target). Must not call: Lua.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "load/engine.hpp"
#include "runara/command_target.hpp"

namespace runara {

struct RemoteLoadPlan {
  std::weak_ptr<CommandTarget> target;  // weak: the ssh session's owner may close it mid-load
  std::string agent_command;  // the installed agent, e.g. ".cache/runara/runara-agent-1a2b..."
  double deadline_s = 0;      // the agent stops the load after this long (the run's deadline)
  std::size_t memory_bytes = 0;  // the agent's cap (the run's --max-memory)
  // Masks the run's secrets in text that came from the machine before it goes into an error
  // (what the agent printed). Null: as is (tests).
  std::function<std::string(std::string_view)> redact;
};

std::unique_ptr<LoadRunner> make_remote_load(std::shared_ptr<const LoadSpec> spec, LoadRunner::Progress progress,
                                             RemoteLoadPlan plan);

}  // namespace runara

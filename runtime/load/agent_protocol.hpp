// The line protocol between runara and its remote load agent (agent/, `http_load.run{ on = s }`).
// Versioned: both sides name kAgentProtocol, and a mismatch is refused before any load runs.
//
// runara -> agent, on the agent's stdin (then held open: its end, EOF, stops the agent):
//   ping N                 answered at once with "pong N" (runara times the round trip)
//   spec {json}            the load to run (encode_agent_spec); exactly one
// agent -> runara, on its stdout, one message per line:
//   runara-agent P V       first: protocol P, agent version V
//   pong N
//   P text                 the engine's live progress line
//   R i intended sent first done in out chunks prompt status error flags
//                          one finished request (append_record_line), integers, times in ns
//                          after the load's start on the agent's monotonic clock
//   S {json}               the outcome: statistics, lengths and counters (encode_outcome); last
//   E text                 the agent cannot run the load: why; last
//
// Contract: pure functions, any thread, no I/O. Every decoder checks everything it reads (the
// other side may be a broken or hostile program) and never throws: false and `error` say what
// was wrong.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "load/engine.hpp"
#include "load/spec.hpp"

namespace runara {

inline constexpr int kAgentProtocol = 3;  // 3: TTFT and E2EL from the send, and from the schedule
// The longest line either side sends (an outcome with full histograms and 100,000 lengths is
// about 3 MB); a longer one is an error.
inline constexpr std::size_t kAgentMaxLine = 16u << 20;
// The most the outcome's JSON document may take once parsed (json_tree_bytes, estimated before
// it is built; the largest honest one is about 20 MiB): a line of small numbers would otherwise
// be 16 times its size in memory. runara also charges the estimate to the run's --max-memory
// while it decodes (remote_load.cpp).
inline constexpr std::size_t kAgentMaxOutcomeTreeBytes = 48u << 20;

// ---- runara -> agent ----
// The spec line, without its newline. `deadline_s`: the agent stops the load after this long.
// `memory_bytes`: the agent's cap on what the load may hold (0: none).
std::string encode_agent_spec(const LoadSpec& spec, double deadline_s, std::size_t memory_bytes);
// The agent's side. The spec gets no target policy and no memory budget: the agent sets both.
bool decode_agent_spec(std::string_view json, LoadSpec& spec, double& deadline_s, std::size_t& memory_bytes,
                       std::string& error);

// ---- agent -> runara ----
std::string hello_line(std::string_view agent_version);
// The protocol version a hello line names; false when `line` is not a hello line.
bool parse_hello(std::string_view line, int& protocol, std::string& agent_version);

void append_record_line(std::string& out, const RequestRecord& r);  // "R ...\n"
// `fields`: the line after "R ".
bool parse_record_line(std::string_view fields, RequestRecord& r, std::string& error);

// The outcome line's JSON (after "S "): stats, lengths and counters. `records_dropped`: records
// the agent's output queue dropped (runara then lacks them).
std::string encode_outcome(const LoadOutcome& outcome, std::uint64_t records_dropped);
// A document past kAgentMaxOutcomeTreeBytes is refused before it is built: "the agent's results
// would take about N MiB once parsed, more than the M MiB allowed".
bool decode_outcome(std::string_view json, const Slo& slo, std::size_t max_lengths, LoadOutcome& out,
                    std::uint64_t& records_dropped, std::string& error);

// ---- plausibility: what a well-formed message may still not say ----
// A line can parse and still be impossible for the load runara asked for (the agent may be
// hostile). runara checks each record as it arrives and the outcome at the end against the spec
// it sent; the first impossibility ends the load as a broken line does.

// The records runara has taken from the agent so far.
struct RecordTally {
  std::uint64_t measured = 0, warmup = 0;
};
// Whether record `r` can belong to `spec`'s load after those in `tally` (which then counts it):
// its times after the load's start and within `elapsed_s` (runara's time since it started the
// agent), its warm-up flag as the engine sets it; for a load of
// `requests`, no more measured records than that and (without `warmup_s`) no index past the
// requests and warm-up requests; for a duration-bound one, due before its end. A closed loop
// bound only by `duration` has no count to check its records against.
bool admit_record(const LoadSpec& spec, const RequestRecord& r, double elapsed_s, RecordTally& tally, std::string& error);
// Whether the load can have issued `claimed` requests (warm-up included): for a load of
// `requests` without a time-based warm-up, at most requests + warmup_requests; for an open loop
// bound by duration, at most the arrivals its seeded schedule (the engine's) has by the end,
// walked for up to kScheduleWalk arrivals (past that: at most twice the mean plus the walk).
// Nothing else bounds it (a closed loop bound by duration).
inline constexpr std::uint64_t kScheduleWalk = 1u << 22;
bool possible_requests(const LoadSpec& spec, std::uint64_t claimed);
// Whether the outcome can be true of `spec`'s load, run for `elapsed_s` as runara saw it (from
// before the agent started to the outcome's arrival), after `seen` records: counts against
// what was asked (completed + failed <= requests, warm-up <= warm-up requests, or the schedule's
// arrivals) and against the records received (never fewer), counters that add up (good,
// errors, statuses, token sources and histogram counts within completed or failed), token
// counts >= 0, times in order and within `elapsed_s`, wall time finite and >= 0, peak
// concurrency within the load's cap. `error` starts "the agent's results are impossible: ".
bool check_outcome(const LoadSpec& spec, const LoadOutcome& outcome, std::uint64_t records_dropped, const RecordTally& seen,
                   double elapsed_s, std::string& error);

}  // namespace runara

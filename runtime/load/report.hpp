// A finished load as results: the JSON summary (keys a superset of `vllm bench serve
// --save-result`, so existing post-processing works) and one JSON line per request (the lines
// of requests.jsonl, which request_log.hpp writes as the load runs).
//
// Conventions, each under its own name (a key vLLM defines means what vLLM means):
//   ttft  first event carrying a token, from the send (vLLM: after any wait for a slot)
//   e2el  last byte of the response, from the send
//   tpot  (e2el - ttft) / (output_tokens - 1), requests with at least 2 tokens (vLLM, MLPerf)
//   itl   every gap between token events of successful requests
//   queue intended to actual send time (open loop; 0 in a closed loop); vLLM's
//         client_queue_time with max_concurrency
//   ttft_from_schedule, e2el_from_schedule  the same from the intended send time: queue
//         included, no coordinated omission (e2el_from_schedule is vLLM's
//         e2el_including_client_queue, written under that name too with max_concurrency)
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "load/engine.hpp"

namespace runara {

// `date` is the local start time as vLLM writes it ("20261121-143005").
nlohmann::json load_result_json(const LoadSpec& spec, const LoadOutcome& outcome, const std::string& date);

// One request as a line of requests.jsonl (numbers in ms with 3 decimals, as "%.3f" would).
void append_request_line(std::string& out, const RequestRecord& record);

}  // namespace runara

// The JSON body of one OpenAI-compatible request (vLLM's /v1/completions and
// /v1/chat/completions): what `vllm bench serve` sends, plus the script's extra fields.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace runara {

struct OpenAiParams {
  std::string endpoint = "completions";  // or "chat"
  std::string model;
  bool stream = true;            // also asks for the usage chunk (stream_options.include_usage)
  int max_tokens = -1;           // -1: not sent (the server's default)
  // false: max_tokens is http_load's default, which a ShareGPT reply's length replaces
  // (load_job/sharegpt_pairs.hpp); true: the script set it, for every request.
  bool max_tokens_given = true;
  bool ignore_eos = false;       // vLLM extension: generate exactly max_tokens
  std::optional<double> temperature;
  nlohmann::json extra_body = nlohmann::json::object();  // merged last: the script wins
};

std::string openai_request_body(const OpenAiParams& params, const std::string& prompt);

}  // namespace runara

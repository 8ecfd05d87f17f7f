#include "load_job/openai_request.hpp"

namespace runara {

std::string openai_request_body(const OpenAiParams& p, const std::string& prompt) {
  nlohmann::json body = {{"model", p.model}, {"stream", p.stream}};
  if (p.endpoint == "chat") {
    body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt}}});
  } else {
    body["prompt"] = prompt;
  }
  if (p.stream) body["stream_options"] = {{"include_usage", true}};
  if (p.max_tokens >= 0) body[p.endpoint == "chat" ? "max_completion_tokens" : "max_tokens"] = p.max_tokens;
  if (p.ignore_eos) body["ignore_eos"] = true;
  if (p.temperature) body["temperature"] = *p.temperature;
  for (const auto& [key, value] : p.extra_body.items()) body[key] = value;
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace runara

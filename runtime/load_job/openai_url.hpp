// The URL an OpenAI-compatible load requests: a server's base URL ("http://h:8000", ".../v1")
// completed with the endpoint's path, or the URL as given when it already names a path; and the
// URL of the same server's vLLM /tokenize.
//
// The path is set on the URL as libcurl parsed it (curl_url_set CURLUPART_PATH), so a query or a
// fragment stays where it was instead of ending up before "/v1/...".
//
// Pure function, no I/O; safe on any thread.
#pragma once

#include <string>

#include "load_job/target_url.hpp"

namespace runara {

// `endpoint` is "chat" (-> /v1/chat/completions) or anything else (-> /v1/completions). Returns
// "" when libcurl cannot rebuild the URL (it parsed it once, so this is not expected).
std::string openai_endpoint_url(const TargetUrl& target, const std::string& endpoint);

// vLLM's POST /tokenize beside a load's endpoint URL (as openai_endpoint_url made it): vLLM
// serves it at the server's root, not under /v1, so a path ending in "/v1/completions" or
// "/v1/chat/completions" has that ending replaced by "/tokenize" ("/proxy/v1/completions" ->
// "/proxy/tokenize": a server behind a path prefix keeps it). "" when the path ends otherwise
// (where the server's root is cannot be told) or libcurl cannot rebuild the URL.
std::string tokenize_url(const std::string& endpoint_url);

}  // namespace runara

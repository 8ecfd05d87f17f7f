// The URL an OpenAI-compatible load requests: a server's base URL ("http://h:8000", ".../v1")
// completed with the endpoint's path, or the URL as given when it already names a path.
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

}  // namespace runara

// libcurl's process-wide initialisation (curl_global_init), done once, before the first multi or
// easy handle of any thread: both libcurl glues (http_client, curl_multi_uv) call it, so no
// thread relies on curl_easy_init's implicit, thread-unsafe initialisation.
#pragma once

namespace runara {

void ensure_curl_initialised();  // any thread; the first call does the work (std::call_once)

}  // namespace runara

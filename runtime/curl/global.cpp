#include "curl/global.hpp"

#include <curl/curl.h>

#include <mutex>

namespace runara {

void ensure_curl_initialised() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace runara

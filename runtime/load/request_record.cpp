#include "load/request_record.hpp"

namespace runara {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone: return "none";
    case ErrorKind::kHttpStatus: return "http_status";
    case ErrorKind::kTimeout: return "timeout";
    case ErrorKind::kConnect: return "connect";
    case ErrorKind::kReset: return "reset";
    case ErrorKind::kMalformedSse: return "malformed_sse";
    case ErrorKind::kServerError: return "server_error";
    case ErrorKind::kRefused: return "refused_target";
    case ErrorKind::kOther: return "other";
  }
  return "other";
}

}  // namespace runara

// Small text helpers every layer needs. Pure functions, any thread.
#pragma once

#include <string>
#include <string_view>

namespace runara {

// `s` without leading and trailing ASCII whitespace (space, tab, CR, LF).
std::string_view trim(std::string_view s);
// At most `max` bytes of `text` with control bytes (NUL and terminal escapes included) made '?':
// text another machine sent, fit for an error message or a terminal.
std::string printable(std::string_view text, std::size_t max);
// Percent-encoding of everything but RFC 3986's unreserved characters (A-Z a-z 0-9 - . _ ~).
std::string url_encode(std::string_view s);

}  // namespace runara

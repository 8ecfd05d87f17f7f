// SHA-256 of a byte string, as lowercase hex (FIPS 180-4).
//
// Contract: a pure function; any thread; never throws. Written here rather than taken from
// libcrypto because libcrypto is loaded only when a run first needs it (base/lazy_library.hpp),
// and hashing the script at the end of every run must not load it.
#pragma once

#include <string>
#include <string_view>

namespace runara {

std::string sha256_hex(std::string_view data);

}  // namespace runara

// Whether a loopback port is free before a fake server takes it. The HTTP library the fakes use
// binds with SO_REUSEPORT, so a second fake on a busy port would silently share it with the
// first; a plain bind without that option finds the port taken.
//
// Contract. Blocking socket calls, for the CLI's own thread before a server starts.
#pragma once

#include <string>

namespace runara::cli {

// "" when 127.0.0.1:`port` can be bound (port 0 always can), else why not.
std::string loopback_port_problem(int port);

}  // namespace runara::cli

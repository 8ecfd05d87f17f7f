// The built-in primitives (droplet, http_load, ssh, gpu_metrics, metrics), made for each run.
// Runtime(options, events) adds them (builtins.cpp); the core never names them. Every binding
// plugs in through the public Context (include/runara/primitive.hpp) only, as a host's own
// primitive does.
#pragma once

#include <memory>
#include <vector>

#include "runara/primitive.hpp"

namespace runara {

std::vector<std::unique_ptr<Primitive>> builtin_primitives();

}  // namespace runara

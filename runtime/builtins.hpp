// The built-in primitives (droplet, http_load, ssh, gpu_metrics, metrics), made for each run.
// Defined in bindings/builtins.cpp: the one place runtime/ reaches into bindings/. Every
// binding plugs in through the public Context (include/runara/primitive.hpp) only, as a host's
// own primitive does.
#pragma once

#include <memory>
#include <vector>

#include "runara/primitive.hpp"

namespace runara {

std::vector<std::unique_ptr<Primitive>> builtin_primitives();

}  // namespace runara

// The primitives every run has, in the order they are opened; teardown runs in reverse, so ssh
// (sessions on the run's droplets) ends before droplet destroys them.
#include "builtins.hpp"

#include "runara/runtime.hpp"

namespace runara {

std::unique_ptr<Primitive> make_droplet_primitive();
std::unique_ptr<Primitive> make_http_load_primitive();
std::unique_ptr<Primitive> make_ssh_primitive();
std::unique_ptr<Primitive> make_gpu_metrics_primitive();
std::unique_ptr<Primitive> make_metrics_primitive();

std::vector<std::unique_ptr<Primitive>> builtin_primitives() {
  std::vector<std::unique_ptr<Primitive>> all;
  all.push_back(make_droplet_primitive());
  all.push_back(make_http_load_primitive());
  all.push_back(make_ssh_primitive());
  all.push_back(make_gpu_metrics_primitive());
  all.push_back(make_metrics_primitive());
  return all;
}

// The embedding API's plain constructor lives here, in the layer above the core that has the
// built-in primitives: the core itself never names them (Runtime(options, events,
// without_builtins) is its own).
Runtime::Runtime(Options options, Events events) : Runtime(std::move(options), std::move(events), without_builtins) {
  for (auto& primitive : builtin_primitives()) add_primitive(std::move(primitive));
}

}  // namespace runara

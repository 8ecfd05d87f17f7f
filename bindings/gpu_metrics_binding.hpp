// What the gpu_metrics binding shares between its files (the table in gpu_metrics_binding.cpp,
// the sampler object's methods in gpu_sampler_object.cpp) and with http_load's `gpu = sampler`.
//
// Contract: the loop thread only (where Lua runs). A RunSampler belongs to the gpu_metrics
// primitive, which stops and writes it at teardown; the sampler object a script holds shares it.
// Uses only the public Context.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <lua.hpp>
#include <nlohmann/json.hpp>
#include <runara/primitive.hpp>

#include "gpu/sampler.hpp"

namespace runara {

struct RunSampler {
  Context* ctx = nullptr;
  int number = 0;  // 1, 2, ... in the order the run started them
  gpu::Backend backend = gpu::Backend::nvidia_smi;
  gpu::GpuStatic facts;
  std::unique_ptr<gpu::GpuSampler> sampler;
  bool csv_written = false;
  ~RunSampler();

  // Pushes { backend, static, samples, marks, phases, summary, problems, ... }, one sample and
  // one phase at a time straight into Lua (whose heap --max-memory bounds): never the whole
  // document as one C++ tree beside it. The summaries' own working memory is charged while
  // they are made; raises when the budget refuses it.
  void push_results(lua_State* L) const;
  // The summary of [start_s, end_s] in http_load's result keys (energy_j, mean_power_w,
  // peak_vram_bytes); empty when no sample falls in reach.
  nlohmann::json load_fields(double start_s, double end_s) const;
};

// The `gpu` option of the options table at `index` (http_load.run): hooks that mark the sampler
// "<point> start" / "<point> end" and add energy_j, mean_power_w, peak_vram_bytes and
// output_tokens_per_joule to the point's result. Empty hooks when the option is absent; raises
// naming `fn` when it is not a sampler.
struct GpuLoadHooks {
  std::function<void(const std::string& point)> started;
  std::function<void(const std::string& point, nlohmann::json& result)> ended;
};
GpuLoadHooks gpu_load_hooks(lua_State* L, int index, const char* fn);

// The sampler objects' metatable in this Lua state (methods mark, stop, write_csv, results):
// once, when the primitive opens.
void define_sampler_object(lua_State* L, Context& ctx);

// Pushes a sampler object for `s`.
void push_sampler_object(lua_State* L, std::shared_ptr<RunSampler> s);

// The sampler at `index`, or nullptr when the value there is not one.
std::shared_ptr<RunSampler> sampler_at(lua_State* L, int index);

}  // namespace runara

// The `gpu_metrics` table: read a host's GPUs once, or sample them through a load.
//
//   local t = gpu_metrics.localhost()             -- or an ssh session
//   print(gpu_metrics.read(t).gpus[1].power_w)
//   local s = gpu_metrics.start(t, { interval = 0.5 })
//   s:mark("concurrency=32 start") ... local r = s:stop(); s:write_csv("gpu.csv")
//
// The work — tools, parsing, sampling, summaries — is runtime/gpu/'s; this file speaks Lua and
// only through the public Context. Scripts choose a backend by name, never a command line.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>

#include "gpu/csv.hpp"
#include "gpu/json.hpp"
#include "gpu/reader.hpp"
#include "gpu/local_target.hpp"
#include "gpu_metrics_binding.hpp"
#include "kit/functions.hpp"
#include "kit/wait.hpp"
#include "script/args.hpp"
#include "push_marks.hpp"
#include "script/values.hpp"
#include "base/run_output.hpp"

namespace runara {

namespace {

const char* const kRead = "gpu_metrics.read";
const char* const kStart = "gpu_metrics.start";
char kLocalMeta;  // registry key of the run's one gpu_metrics.localhost() handle
constexpr double kMinInterval = 0.05, kMaxInterval = 3600;

}  // namespace

namespace {

void push_samples(lua_State* L, const std::vector<gpu::Sample>& samples) {
  lua_createtable(L, static_cast<int>(std::min<std::size_t>(samples.size(), INT32_MAX)), 0);
  int i = 0;
  for (const auto& s : samples) {
    push_json(L, gpu::sample_json(s));
    lua_rawseti(L, -2, ++i);
  }
}

// One summary per mark, from it to the next (the last: to `end`).
void push_phases(lua_State* L, const gpu::Summarizer& summaries, const std::vector<gpu::Mark>& marks, double end) {
  lua_createtable(L, static_cast<int>(marks.size()), 0);
  for (std::size_t m = 0; m < marks.size(); ++m) {
    push_json(L, gpu::phase_json(summaries.window(marks[m].t_s, m + 1 < marks.size() ? marks[m + 1].t_s : end, marks[m].label)));
    lua_rawseti(L, -2, static_cast<int>(m + 1));
  }
}

}  // namespace

RunSampler::~RunSampler() {
  if (sampler && ctx) ctx->release_memory(sampler->reserved_bytes());
}

void RunSampler::push_results(lua_State* L) const {
  const auto& g = *sampler;
  // The summaries' lists of readings, charged while they exist.
  const std::size_t working = gpu::Summarizer::bytes_for(g.samples());
  if (ctx) {
    if (std::string refused = ctx->reserve_memory(working, "summarizing the GPU samples"); !refused.empty())
      luaL_error(L, "%s", refused.c_str());
  }
  struct Release {
    Context* ctx;
    std::size_t bytes;
    ~Release() {
      if (ctx) ctx->release_memory(bytes);
    }
  } release{ctx, working};
  const gpu::Summarizer summaries(g.samples());
  const double end = g.now_s();
  lua_createtable(L, 0, 10);
  const std::string_view name = gpu::backend_name(backend);
  lua_pushlstring(L, name.data(), name.size());
  lua_setfield(L, -2, "backend");
  push_json(L, gpu::static_json(facts));
  lua_setfield(L, -2, "static");
  lua_pushboolean(L, g.running());
  lua_setfield(L, -2, "running");
  push_samples(L, g.samples());
  lua_setfield(L, -2, "samples");
  push_marks(L, g.marks());
  lua_setfield(L, -2, "marks");
  push_phases(L, summaries, g.marks(), end);
  lua_setfield(L, -2, "phases");
  push_json(L, gpu::phase_json(summaries.window(0, end, "run")));
  lua_setfield(L, -2, "summary");
  push_problems(L, g.problems(), ctx);
  lua_setfield(L, -2, "problems");
  lua_pushnumber(L, g.skipped_ticks());
  lua_setfield(L, -2, "skipped_ticks");
  lua_pushnumber(L, g.unreadable());
  lua_setfield(L, -2, "unreadable_outputs");
}

nlohmann::json RunSampler::load_fields(double start_s, double end_s) const {
  const gpu::PhaseSummary p = gpu::summarize_window(sampler->samples(), start_s, end_s, "load");
  nlohmann::json j = nlohmann::json::object();
  if (p.energy_j) j["energy_j"] = *p.energy_j;
  if (!p.energy_source.empty()) j["energy_source"] = p.energy_source;
  if (!p.energy_note.empty()) j["energy_note"] = p.energy_note;
  if (p.mean_power_w) j["mean_power_w"] = *p.mean_power_w;
  if (p.peak_vram_bytes) j["peak_vram_bytes"] = *p.peak_vram_bytes;
  return j;
}

namespace {

class GpuMetricsPrimitive;
GpuMetricsPrimitive& primitive_of(lua_State* L) {
  return *static_cast<GpuMetricsPrimitive*>(lua_touserdata(L, lua_upvalueindex(1)));
}

std::optional<gpu::Backend> backend_option(lua_State* L, int index, const char* fn) {
  if (lua_isnoneornil(L, index)) return std::nullopt;
  const std::string name = args::opt_string(L, index, fn, "backend").value_or("auto");
  if (name == "auto") return std::nullopt;
  auto b = gpu::backend_from_name(name);
  if (!b) {
    args::raise(L, "%s: option 'backend' must be \"auto\", \"amd-smi\", \"rocm-smi\" or \"nvidia-smi\", got \"%s\"", fn,
                name.substr(0, 64).c_str());
  }
  return b;
}

std::shared_ptr<CommandTarget> target_arg(lua_State* L, const char* fn) {
  Context& ctx = Context::from(L);
  auto t = ctx.command_target(L, 1);
  if (!t) args::fail(L, fn, 1, "target", "an ssh session or gpu_metrics.local() (a closed session is no target)");
  return t;
}

void push_snapshot(lua_State* L, const gpu::Snapshot& s) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : s.gpus) gpus.push_back(gpu::reading_json(g));
  push_json(L, {{"backend", gpu::backend_name(s.backend)}, {"gpus", std::move(gpus)}, {"static", gpu::static_json(s.facts)}});
}

class GpuMetricsPrimitive final : public Primitive {
 public:
  std::string name() const override { return "gpu_metrics"; }

  void open(lua_State* L, Context& ctx) override {
    ctx_ = &ctx;
    local_ = std::make_shared<gpu::LocalTarget>(ctx.loop());
    define_sampler_object(L, ctx);
    lua_newtable(L);
    // `local` is a Lua keyword: gpu_metrics.local() does not parse, gpu_metrics["local"]() does.
    kit::set_functions(L, ctx,
                       {{"read", &GpuMetricsPrimitive::read, kit::Waits::yes},
                        {"start", &GpuMetricsPrimitive::start, kit::Waits::yes},
                        {"localhost", &GpuMetricsPrimitive::local},
                        {"local", &GpuMetricsPrimitive::local}},
                       this);
  }

  // Samplers still running are stopped and their samples written (gpu_metrics_N.csv).
  void teardown(Context& ctx, std::function<void(std::string)> done) override {
    readers_.clear();
    std::string errors;
    for (auto& s : samplers_) {
      if (!s->sampler->running()) continue;
      s->sampler->stop();
      if (s->csv_written) continue;
      const std::string name = "gpu_metrics_" + std::to_string(s->number) + ".csv";
      std::string error = write_csv_now(ctx, name, *s->sampler);
      if (!error.empty()) errors += (errors.empty() ? "" : "; ") + ("gpu_metrics: cannot write " + name + ": " + error);
      else ctx.log("gpu_metrics: sampler " + std::to_string(s->number) + " was still running at the end; stopped it, wrote " + name);
    }
    done(errors);
  }

  std::string pending_teardown() const override {
    int running = 0;
    for (const auto& s : samplers_) running += s->sampler->running() ? 1 : 0;
    return running ? "stopping " + std::to_string(running) + " GPU sampler(s)" : "";
  }

 private:
  // The CSV written in pieces (a run's samples may take tens of MiB as text: never held whole
  // at teardown), to a temporary file renamed into place. `name` has no folder part.
  static std::string write_csv_now(Context& ctx, const std::string& name, const gpu::GpuSampler& sampler) {
    const std::string dir = ctx.out_dir();
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return std::strerror(errno);
    std::string error;
    const std::string tmp = name + ".tmp";
    const int file = open_beneath(fd, tmp, O_WRONLY | O_CREAT | O_TRUNC, error);
    if (file >= 0) {
      gpu::samples_csv_pieces(sampler.samples(), sampler.marks(), [&](std::string_view piece) {
        while (!piece.empty()) {
          const ssize_t n = ::write(file, piece.data(), piece.size());
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) {
            error = std::string("cannot write '") + tmp + "': " + std::strerror(errno);
            return false;
          }
          piece.remove_prefix(static_cast<std::size_t>(n));
        }
        return true;
      });
      ::fchmod(file, 0644);
      if (::close(file) != 0 && error.empty()) error = std::string("cannot write '") + tmp + "': " + std::strerror(errno);
      if (error.empty() && ::renameat(fd, tmp.c_str(), fd, name.c_str()) != 0)
        error = std::string("cannot write '") + name + "': " + std::strerror(errno);
      if (!error.empty()) ::unlinkat(fd, tmp.c_str(), 0);
    }
    ::close(fd);
    return error;
  }

  // One handle per run, anchored in the registry: Context keys targets by the userdata's
  // address, which a collected handle could pass on to an unrelated new userdata.
  static int local(lua_State* L) {
    auto& self = primitive_of(L);
    lua_pushlightuserdata(L, &kLocalMeta);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
    lua_newuserdata(L, 1);
    lua_newtable(L);
    lua_pushliteral(L, "gpu_metrics.localhost");
    lua_setfield(L, -2, "__metatable");
    lua_pushcfunction(L, [](lua_State* L) {
      lua_pushliteral(L, "gpu_metrics.localhost()");
      return 1;
    });
    lua_setfield(L, -2, "__tostring");
    lua_setmetatable(L, -2);
    self.ctx_->add_command_target(L, -1, self.local_);
    lua_pushlightuserdata(L, &kLocalMeta);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    return 1;
  }

  static int read(lua_State* L) {
    auto& self = primitive_of(L);
    auto target = target_arg(L, kRead);
    std::optional<gpu::Backend> wanted;
    double timeout = 30;
    if (!lua_isnoneornil(L, 2)) {
      args::table(L, 2, kRead, "options");
      args::only_fields(L, 2, kRead, {"backend", "timeout"});
      wanted = backend_option(L, 2, kRead);
      timeout = args::opt_number(L, 2, kRead, "timeout").value_or(timeout);
      if (!(timeout >= 1 && timeout <= 600)) args::raise(L, "%s: option 'timeout' must be 1 to 600 seconds", kRead);
    }
    Context& ctx = *self.ctx_;
    if (ctx.stopping()) args::raise(L, "%s: the run is ending", kRead);
    const std::uint64_t id = ++self.next_reader_;
    auto& reader = self.readers_[id];
    reader = std::make_unique<gpu::GpuReader>(ctx.loop(), self.cache_, static_cast<uint64_t>(timeout * 1000));
    auto wait = kit::Wait::start(L, kRead, [&self, id] { self.readers_.erase(id); });
    reader->start(target, wanted, true, [&self, id, wait](Result<gpu::Snapshot> s) {
      self.readers_.erase(id);  // we are inside its callback: allowed by its contract
      wait->settle<gpu::Snapshot>(std::move(s), [](lua_State* L, gpu::Snapshot& snapshot) {  // errors redacted by the wait
        push_snapshot(L, snapshot);
        return 1;
      });
    });
    return wait->yield(L);
  }

  static int start(lua_State* L) {
    auto& self = primitive_of(L);
    auto target = target_arg(L, kStart);
    gpu::GpuSampler::Options opt;
    std::optional<gpu::Backend> wanted;
    if (!lua_isnoneornil(L, 2)) {
      args::table(L, 2, kStart, "options");
      args::only_fields(L, 2, kStart, {"interval", "backend", "stall_timeout"});
      wanted = backend_option(L, 2, kStart);
      opt.interval_s = args::opt_number(L, 2, kStart, "interval").value_or(1.0);
      opt.stall_s = args::opt_number(L, 2, kStart, "stall_timeout").value_or(0);
    }
    if (!(opt.interval_s >= kMinInterval && opt.interval_s <= kMaxInterval))
      args::raise(L, "%s: option 'interval' must be %g to %g seconds, got %g", kStart, kMinInterval, kMaxInterval, opt.interval_s);
    if (!(opt.stall_s == 0 || (opt.stall_s >= 0.1 && opt.stall_s <= 3600)))
      args::raise(L, "%s: option 'stall_timeout' must be 0.1 to 3600 seconds, got %g", kStart, opt.stall_s);
    Context& ctx = *self.ctx_;
    if (ctx.stopping()) args::raise(L, "%s: the run is ending; no new sampler", kStart);
    const std::uint64_t id = ++self.next_reader_;
    auto& reader = self.readers_[id];
    reader = std::make_unique<gpu::GpuReader>(ctx.loop(), self.cache_);
    auto wait = kit::Wait::start(L, kStart, [&self, id] { self.readers_.erase(id); });
    std::weak_ptr<CommandTarget> weak = target;
    reader->start(target, wanted, false, [&self, id, wait, weak, opt](Result<gpu::Snapshot> snapshot) {
      self.readers_.erase(id);
      if (!snapshot) return wait->fail(snapshot.error());  // redacted by the wait
      auto run = self.start_sampler(snapshot.value(), weak, opt);
      wait->resume([run](lua_State* L) {
        push_sampler_object(L, run);
        return 1;
      });
    });
    return wait->yield(L);
  }

  // The run's next sampler, on the backend the reader found.
  std::shared_ptr<RunSampler> start_sampler(const gpu::Snapshot& s, std::weak_ptr<CommandTarget> target, gpu::GpuSampler::Options opt) {
    Context& ctx = *ctx_;
    auto run = std::make_shared<RunSampler>();
    run->ctx = &ctx;
    run->number = static_cast<int>(samplers_.size()) + 1;
    run->backend = s.backend;
    run->facts = s.facts;
    opt.backend = s.backend;
    opt.reserve = [&ctx](std::size_t bytes) { return status_from(ctx.reserve_memory(bytes, "gpu_metrics samples")); };
    const int number = run->number;
    run->sampler = std::make_unique<gpu::GpuSampler>(ctx.loop(), std::move(target), opt, [&ctx, number](const std::string& p) {
      ctx.log("gpu_metrics: sampler " + std::to_string(number) + ": " + p);
    });
    run->sampler->start();
    samplers_.push_back(run);
    return run;
  }

  Context* ctx_ = nullptr;
  std::shared_ptr<gpu::LocalTarget> local_;
  gpu::DetectCache cache_;
  std::map<std::uint64_t, std::unique_ptr<gpu::GpuReader>> readers_;
  std::uint64_t next_reader_ = 0;
  std::vector<std::shared_ptr<RunSampler>> samplers_;
};

}  // namespace

std::unique_ptr<Primitive> make_gpu_metrics_primitive() { return std::make_unique<GpuMetricsPrimitive>(); }

}  // namespace runara

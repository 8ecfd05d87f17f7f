// The object gpu_metrics.start returns: sampler:mark(label), sampler:stop(), sampler:results(),
// sampler:write_csv(path). The sampling itself is runtime/gpu/sampler.*.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <uv.h>

#include "gpu/csv.hpp"
#include "gpu/json.hpp"
#include "base/run_output.hpp"
#include "gpu_metrics_binding.hpp"
#include "guards/permissions.hpp"
#include "kit/userdata.hpp"
#include "kit/wait.hpp"
#include "load_job/off_loop.hpp"
#include "script/args.hpp"

namespace runara {

namespace {

constexpr std::size_t kMaxLabel = 256;
constexpr std::size_t kMaxMarks = 100000;

// One metatable, "gpu_metrics sampler".
using SamplerObject = kit::Userdata<std::shared_ptr<RunSampler>>;

std::shared_ptr<RunSampler> self(lua_State* L, const char* fn) { return SamplerObject::check(L, 1, fn); }

int mark(lua_State* L) {
  auto s = self(L, "sampler:mark");
  std::string label = args::string(L, 2, "sampler:mark", "label");
  if (label.size() > kMaxLabel) args::raise(L, "sampler:mark: label is %zu bytes; at most %zu", label.size(), kMaxLabel);
  if (s->sampler->marks().size() >= kMaxMarks) args::raise(L, "sampler:mark: more than %zu marks", kMaxMarks);
  if (!s->sampler->running()) args::raise(L, "sampler:mark: the sampler has stopped (mark before stop())");
  if (Status kept = s->sampler->mark(std::move(label)); !kept) args::raise(L, "sampler:mark: %s", kept.error().c_str());
  return 0;
}

int stop(lua_State* L) {
  auto s = self(L, "sampler:stop");
  s->sampler->stop();
  s->push_results(L);
  return 1;
}

int results(lua_State* L) {
  auto s = self(L, "sampler:results");
  s->push_results(L);
  return 1;
}

// The CSV's text, made whole for the thread pool to write (a large file must not stall the
// loop), its bytes held from --max-memory until it is written.
struct CsvText {
  Context* ctx;
  std::size_t charged;
  std::string dir, relative, data;
  Status written;
  ~CsvText() { ctx->release_memory(charged); }
};

int write_csv(lua_State* L) {
  const char* fn = "sampler:write_csv";
  auto s = self(L, fn);
  const std::string path = args::string(L, 2, fn, "path");
  std::string error;
  std::string relative = normalize_output_path(path, error);
  if (relative.empty()) args::raise(L, "%s: %s", fn, error.c_str());
  if (starts_with_reserved_name(relative)) args::raise(L, "%s: '%s' is written by runara itself; choose another name", fn, path.c_str());
  Context& ctx = Context::from(L);
  // Several calls at once would each hold a copy: charged first.
  const std::size_t bytes = gpu::samples_csv_bytes(s->sampler->samples(), s->sampler->marks());
  if (std::string refused = ctx.reserve_memory(bytes, "the CSV of the GPU samples"); !refused.empty())
    args::raise(L, "%s: %s", fn, refused.c_str());
  auto text = std::make_shared<CsvText>(CsvText{&ctx, bytes, ctx.out_dir(), relative, gpu::samples_csv(s->sampler->samples(), s->sampler->marks()), {}});
  s->csv_written = true;
  // The write itself cannot be stopped (it is quick); a cancelled task just gets no answer.
  auto wait = kit::Wait::start(L, fn);
  off_loop(
      ctx.loop(),
      [text] {
        const int fd = open(text->dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
          text->written = Error{"cannot open the output folder: " + std::string(std::strerror(errno))};
          return;
        }
        text->written = status_from(write_beneath(fd, text->relative, text->data));
        close(fd);
      },
      [text, wait] { wait->settle(std::move(text->written)); });
  return wait->yield(L);
}

void define_methods(lua_State* L, Context& ctx) {
  SamplerObject::define(L, ctx, "gpu_metrics sampler",
                        {{"mark", mark}, {"stop", stop}, {"results", results}, {"write_csv", write_csv, kit::Waits::yes}});
}

}  // namespace

GpuLoadHooks gpu_load_hooks(lua_State* L, int index, const char* fn) {
  lua_pushliteral(L, "gpu");
  lua_rawget(L, index);
  GpuLoadHooks hooks;
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return hooks;
  }
  auto s = sampler_at(L, -1);
  if (!s) args::raise(L, "%s: option 'gpu' must be a sampler from gpu_metrics.start, got %s", fn, luaL_typename(L, -1));
  lua_pop(L, 1);
  auto starts = std::make_shared<std::map<std::string, double>>();
  // A mark the budget refuses is left out: the load's own figures do not depend on it.
  hooks.started = [s, starts](const std::string& point) {
    (*starts)[point] = s->sampler->now_s();
    if (s->sampler->running()) (void)s->sampler->mark(point + " start");
  };
  hooks.ended = [s, starts](const std::string& point, nlohmann::json& result) {
    const double end = s->sampler->now_s();
    if (s->sampler->running()) (void)s->sampler->mark(point + " end");
    auto it = starts->find(point);
    if (it == starts->end()) return;
    nlohmann::json fields = s->load_fields(it->second, end);
    starts->erase(it);
    const auto tokens = result.find("total_output_tokens");
    const auto energy = fields.find("energy_j");
    if (tokens != result.end() && tokens->is_number() && energy != fields.end() && energy->get<double>() > 0)
      fields["output_tokens_per_joule"] = tokens->get<double>() / energy->get<double>();
    result.update(fields);
  };
  return hooks;
}

void define_sampler_object(lua_State* L, Context& ctx) { define_methods(L, ctx); }

void push_sampler_object(lua_State* L, std::shared_ptr<RunSampler> s) { SamplerObject::push(L, std::move(s)); }

std::shared_ptr<RunSampler> sampler_at(lua_State* L, int index) {
  auto* s = SamplerObject::test(L, index);
  return s ? *s : nullptr;
}

}  // namespace runara

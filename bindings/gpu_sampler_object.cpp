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
#include "gpu_metrics_binding.hpp"
#include "script/args.hpp"
#include "script/values.hpp"
#include "guards/permissions.hpp"
#include "base/run_output.hpp"

namespace runara {

namespace {

char kSamplerMeta;  // registry key of the sampler objects' metatable
constexpr std::size_t kMaxLabel = 256;
constexpr std::size_t kMaxMarks = 100000;

struct Box {
  std::shared_ptr<RunSampler> s;
};

std::shared_ptr<RunSampler> self(lua_State* L, const char* fn) {
  auto s = sampler_at(L, 1);
  if (!s) args::fail(L, fn, 1, "self", "a gpu_metrics sampler (call it with ':')");
  return s;
}

int mark(lua_State* L) {
  auto s = self(L, "sampler:mark");
  std::string label = args::string(L, 2, "sampler:mark", "label");
  if (label.size() > kMaxLabel) args::raise(L, "sampler:mark: label is %zu bytes; at most %zu", label.size(), kMaxLabel);
  if (s->sampler->marks().size() >= kMaxMarks) args::raise(L, "sampler:mark: more than %zu marks", kMaxMarks);
  if (!s->sampler->running()) args::raise(L, "sampler:mark: the sampler has stopped (mark before stop())");
  if (std::string refused = s->sampler->mark(std::move(label)); !refused.empty()) args::raise(L, "sampler:mark: %s", refused.c_str());
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

// Writing the CSV happens on libuv's thread pool: a large file must not stall the loop.
struct CsvJob {
  uv_work_t req;
  Context* ctx;
  WaitId wait;
  std::string dir, relative, data, error;
  std::size_t charged = 0;  // the text's bytes, held from --max-memory until it is written
  std::shared_ptr<bool> cancelled = std::make_shared<bool>(false);  // the task was cancelled meanwhile
  ~CsvJob() {
    if (charged) ctx->release_memory(charged);
  }
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
  // The text is made whole for the thread pool to write: its size is charged first (several
  // calls at once would each hold a copy).
  const std::size_t bytes = gpu::samples_csv_bytes(s->sampler->samples(), s->sampler->marks());
  if (std::string refused = ctx.reserve_memory(bytes, "the CSV of the GPU samples"); !refused.empty())
    args::raise(L, "%s: %s", fn, refused.c_str());
  auto* job = new CsvJob;
  job->ctx = &ctx;
  job->charged = bytes;
  job->dir = ctx.out_dir();
  job->relative = relative;
  job->data = gpu::samples_csv(s->sampler->samples(), s->sampler->marks());
  job->req.data = job;
  s->csv_written = true;
  // The write itself cannot be stopped (it is quick); a cancelled task just gets no answer.
  job->wait = ctx.suspend(L, [cancelled = job->cancelled] { *cancelled = true; });
  uv_queue_work(
      ctx.loop(), &job->req,
      [](uv_work_t* req) {
        auto* j = static_cast<CsvJob*>(req->data);
        const int fd = open(j->dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
          j->error = "cannot open the output folder: " + std::string(std::strerror(errno));
          return;
        }
        j->error = write_beneath(fd, j->relative, j->data);
        close(fd);
      },
      [](uv_work_t* req, int) {
        std::unique_ptr<CsvJob> j(static_cast<CsvJob*>(req->data));
        if (*j->cancelled) return;
        if (!j->error.empty()) return j->ctx->fail(j->wait, "sampler:write_csv: " + j->error);
        j->ctx->resume(j->wait, [](lua_State*) { return 0; });
      });
  return ctx.yield(L);
}

int gc(lua_State* L) {
  static_cast<Box*>(lua_touserdata(L, 1))->~Box();
  return 0;
}

void push_metatable(lua_State* L) {
  lua_pushlightuserdata(L, &kSamplerMeta);
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (!lua_isnil(L, -1)) return;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_newtable(L);
  lua_pushcfunction(L, mark);
  lua_setfield(L, -2, "mark");
  lua_pushcfunction(L, stop);
  lua_setfield(L, -2, "stop");
  lua_pushcfunction(L, results);
  lua_setfield(L, -2, "results");
  Context::from(L).push_async(L, write_csv);
  lua_setfield(L, -2, "write_csv");
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, gc);
  lua_setfield(L, -2, "__gc");
  lua_pushliteral(L, "gpu_metrics sampler");
  lua_setfield(L, -2, "__metatable");
  lua_pushlightuserdata(L, &kSamplerMeta);
  lua_pushvalue(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
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

void push_sampler_object(lua_State* L, std::shared_ptr<RunSampler> s) {
  void* mem = lua_newuserdata(L, sizeof(Box));
  new (mem) Box{std::move(s)};
  push_metatable(L);
  lua_setmetatable(L, -2);
}

std::shared_ptr<RunSampler> sampler_at(lua_State* L, int index) {
  if (lua_type(L, index) != LUA_TUSERDATA || !lua_getmetatable(L, index)) return nullptr;
  lua_pushlightuserdata(L, &kSamplerMeta);
  lua_rawget(L, LUA_REGISTRYINDEX);
  const bool ours = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return ours ? static_cast<Box*>(lua_touserdata(L, index))->s : nullptr;
}

}  // namespace runara

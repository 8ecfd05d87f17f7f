// The `metrics` table: Prometheus /metrics endpoints (vLLM, SGLang, ...) read once or through a
// load, with the same phase marks as the GPU sampler.
//
//   local m = metrics.scrape(server.url .. "/metrics")
//   print(m.values["vllm:num_requests_running"])
//   local s = metrics.start(url, { interval = 1, prefix = "vllm:" }) ... s:mark("c=32") ... s:stop()
//
// URLs obey http_load's target policy (the run's droplets, tunnels and simulated servers, and
// --allow-host grants), judged on each connection. The work is runtime/metrics/'s.
#include <uv.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string_view>
#include <unordered_set>

#include "kit/functions.hpp"
#include "kit/userdata.hpp"
#include "kit/wait.hpp"
#include "load_job/target_url.hpp"
#include "metrics/results_json.hpp"
#include "metrics/sampler.hpp"
#include "push_marks.hpp"
#include "run_target_policy.hpp"
#include "runara/primitive.hpp"
#include "runara/runtime.hpp"
#include "script/args.hpp"
#include "script/values.hpp"

namespace runara {

namespace {

const char* const kScrape = "metrics.scrape";
const char* const kStart = "metrics.start";
const char* const kGet = "metrics.get";

class MetricsPrimitive;
MetricsPrimitive& primitive_of(lua_State* L) { return *static_cast<MetricsPrimitive*>(lua_touserdata(L, lua_upvalueindex(1))); }

// The script's url, checked by libcurl's own parser, and the policy judging each connection.
std::pair<std::string, metrics::AllowConnect> target(lua_State* L, Context& ctx, const char* fn) {
  const std::string text = args::string(L, 1, fn, "url");
  auto url = parse_target_url(text);
  if (!url) args::raise(L, "%s: url %s", fn, url.error().c_str());
  // Judged against what the run may reach when each connection opens (on the loop thread): a
  // sampler started before a droplet was destroyed or a tunnel closed no longer reaches it.
  Context* run = &ctx;
  std::string host = url->host;
  return {url->url, [run, host](const sockaddr* addr, std::string& why) {
            return run_target_policy(*run, "metrics")->allows(addr, host, why);
          }};
}

// { label, start_s, end_s, metrics = { name = { first, last, delta, mean, max, samples } } },
// pushed straight into Lua.
void push_window(lua_State* L, const std::map<std::string, metrics::MetricStats>& stats, double a, double b,
                 const std::string& label) {
  lua_createtable(L, 0, 4);
  lua_pushlstring(L, label.data(), label.size());
  lua_setfield(L, -2, "label");
  lua_pushnumber(L, a);
  lua_setfield(L, -2, "start_s");
  lua_pushnumber(L, b);
  lua_setfield(L, -2, "end_s");
  lua_createtable(L, 0, static_cast<int>(std::min<std::size_t>(stats.size(), INT32_MAX)));
  for (const auto& [name, st] : stats) {
    lua_pushlstring(L, name.data(), name.size());
    lua_createtable(L, 0, 6);
    const std::pair<const char*, double> fields[] = {{"first", st.first}, {"last", st.last}, {"delta", st.delta},
                                                     {"mean", st.mean},   {"max", st.max},   {"samples", st.samples}};
    for (const auto& [key, value] : fields) {
      lua_pushnumber(L, value);
      lua_setfield(L, -2, key);
    }
    lua_rawset(L, -3);
  }
  lua_setfield(L, -2, "metrics");
}

// { { t_s, values = { name = value } }, ... }
void push_samples(lua_State* L, const std::vector<metrics::ScrapeSample>& samples) {
  lua_createtable(L, static_cast<int>(std::min<std::size_t>(samples.size(), INT32_MAX)), 0);
  int i = 0;
  for (const auto& x : samples) {
    lua_createtable(L, 0, 2);
    lua_pushnumber(L, x.t_s);
    lua_setfield(L, -2, "t_s");
    lua_createtable(L, 0, static_cast<int>(std::min<std::size_t>(x.values.size(), INT32_MAX)));
    for (const auto& [name, v] : x.values) {
      lua_pushlstring(L, name.data(), name.size());
      lua_pushnumber(L, v);
      lua_rawset(L, -3);
    }
    lua_setfield(L, -2, "values");
    lua_rawseti(L, -2, ++i);
  }
}

struct RunScraper {
  Context* ctx = nullptr;
  std::unique_ptr<metrics::MetricsSampler> sampler;
  ~RunScraper() {
    if (ctx && sampler) ctx->release_memory(sampler->reserved_bytes());
  }
  // { running, samples, marks, phases, summary, problems, skipped_ticks }, one sample and one
  // phase at a time straight into Lua (whose heap --max-memory bounds), never the whole document
  // as one C++ tree beside it; the phases' working maps are charged while they are made.
  void push_results(lua_State* L) const {
    const auto& s = *sampler;
    std::unordered_set<std::string_view> names;
    std::size_t name_bytes = 0;
    for (const auto& x : s.samples())
      for (const auto& [name, v] : x.values)
        if (names.insert(name).second) name_bytes += name.size();
    // Per name: its node in the set above and in the phase's three maps, and a copy of a long name.
    const std::size_t working = names.size() * 400 + name_bytes;
    if (std::string refused = ctx->reserve_memory(working, "summarizing the metrics samples"); !refused.empty())
      luaL_error(L, "%s", refused.c_str());
    struct Release {
      Context* ctx;
      std::size_t bytes;
      ~Release() { ctx->release_memory(bytes); }
    } release{ctx, working};
    lua_createtable(L, 0, 7);
    lua_pushboolean(L, s.running());
    lua_setfield(L, -2, "running");
    push_samples(L, s.samples());
    lua_setfield(L, -2, "samples");
    const auto& marks = s.marks();
    push_marks(L, marks);
    lua_setfield(L, -2, "marks");
    const double end = s.now_s();
    lua_createtable(L, static_cast<int>(marks.size()), 0);
    metrics::summarize_phases(s.samples(), marks, end, [&](std::size_t m, const std::map<std::string, metrics::MetricStats>& stats) {
      push_window(L, stats, marks[m].t_s, m + 1 < marks.size() ? marks[m + 1].t_s : end, marks[m].label);
      lua_rawseti(L, -2, static_cast<int>(m + 1));
    });
    lua_setfield(L, -2, "phases");
    push_window(L, metrics::summarize_window(s.samples(), 0, end), 0, end, "run");
    lua_setfield(L, -2, "summary");
    push_problems(L, s.problems(), ctx);
    lua_setfield(L, -2, "problems");
    lua_pushnumber(L, s.skipped_ticks());
    lua_setfield(L, -2, "skipped_ticks");
  }
};

// The object metrics.start returns (one metatable, "metrics sampler").
using SamplerObject = kit::Userdata<std::shared_ptr<RunScraper>>;

std::shared_ptr<RunScraper> self_arg(lua_State* L, const char* fn) { return SamplerObject::check(L, 1, fn); }

int s_mark(lua_State* L) {
  auto s = self_arg(L, "sampler:mark");
  std::string label = args::string(L, 2, "sampler:mark", "label");
  if (label.size() > 256) args::raise(L, "sampler:mark: label is %zu bytes; at most 256", label.size());
  if (s->sampler->marks().size() >= 100000) args::raise(L, "sampler:mark: more than 100000 marks");
  if (!s->sampler->running()) args::raise(L, "sampler:mark: the sampler has stopped (mark before stop())");
  if (Status kept = s->sampler->mark(std::move(label)); !kept) args::raise(L, "sampler:mark: %s", kept.error().c_str());
  return 0;
}

int s_stop(lua_State* L) {
  auto s = self_arg(L, "sampler:stop");
  s->sampler->stop();
  s->push_results(L);
  return 1;
}

int s_results(lua_State* L) {
  self_arg(L, "sampler:results")->push_results(L);
  return 1;
}

class MetricsPrimitive final : public Primitive {
 public:
  std::string name() const override { return "metrics"; }

  void open(lua_State* L, Context& ctx) override {
    ctx_ = &ctx;
    SamplerObject::define(L, ctx, "metrics sampler", {{"mark", s_mark}, {"stop", s_stop}, {"results", s_results}});
    lua_newtable(L);
    kit::set_functions(L, ctx,
                       {{"scrape", &MetricsPrimitive::scrape, kit::Waits::yes},
                        {"start", &MetricsPrimitive::start},
                        {"get", &MetricsPrimitive::get, kit::Waits::yes}},
                       this);
  }

  void teardown(Context&, std::function<void(std::string)> done) override {
    // The client stays until the primitive goes: a cancelled scrape's on_cancel still uses it.
    for (auto& s : samplers_) s->sampler->stop();
    done({});
  }

 private:
  static int scrape(lua_State* L) {
    auto& self = primitive_of(L);
    Context& ctx = *self.ctx_;
    auto [url, allow] = target(L, ctx, kScrape);
    double timeout = 10;
    if (!lua_isnoneornil(L, 2)) {
      args::table(L, 2, kScrape, "options");
      args::only_fields(L, 2, kScrape, {"timeout"});
      timeout = args::opt_number(L, 2, kScrape, "timeout").value_or(timeout);
      if (!(timeout >= 0.1 && timeout <= 600)) args::raise(L, "%s: option 'timeout' must be 0.1 to 600 seconds", kScrape);
    }
    if (ctx.stopping()) args::raise(L, "%s: the run is ending", kScrape);
    auto id = std::make_shared<HttpClient::Id>(0);
    HttpClient* http = &self.http();
    auto wait = kit::Wait::start(L, kScrape, [http, id] { http->cancel(*id); });
    *id = metrics::scrape_once(*http, url, allow, timeout, [&ctx, wait, url](Result<metrics::PromParse> p) {
      if (!p) return wait->fail(p.error());  // redacted by the wait
      // The parse and the JSON made of it for the script (twice the parse: its nodes carry more
      // per item) are held until the result is pushed: charged to the run's budget meanwhile.
      const std::size_t bytes = 3 * p->bytes;
      if (std::string e = ctx.reserve_memory(bytes, "the parsed /metrics (" + std::to_string(p->samples.size()) + " samples)");
          !e.empty()) {
        return wait->fail(url + ": " + e);
      }
      auto held = std::shared_ptr<void>(nullptr, [&ctx, bytes](void*) { ctx.release_memory(bytes); });
      wait->settle<metrics::PromParse>(std::move(p), [held](lua_State* L, metrics::PromParse& parse) {
        push_json(L, metrics::scrape_json(parse));
        return 1;
      });
    });
    return wait->yield(L);
  }

  // One GET of a small endpoint (a readiness probe, /v1/models, /version): {status, body, seconds}.
  // Any HTTP status is an answer; no connection (refused, timeout) raises.
  static int get(lua_State* L) {
    auto& self = primitive_of(L);
    Context& ctx = *self.ctx_;
    auto [url, allow] = target(L, ctx, kGet);
    double timeout = 10;
    if (!lua_isnoneornil(L, 2)) {
      args::table(L, 2, kGet, "options");
      args::only_fields(L, 2, kGet, {"timeout"});
      timeout = args::opt_number(L, 2, kGet, "timeout").value_or(timeout);
      if (!(timeout >= 0.1 && timeout <= 600)) args::raise(L, "%s: option 'timeout' must be 0.1 to 600 seconds", kGet);
    }
    if (ctx.stopping()) args::raise(L, "%s: the run is ending", kGet);
    HttpRequest req;
    req.url = url;
    req.timeout_s = timeout;
    req.max_body_bytes = std::size_t{1} << 20;  // what a probe needs; a hostile server gets no more
    req.allow_connect = allow;
    auto id = std::make_shared<HttpClient::Id>(0);
    HttpClient* http = &self.http();
    auto wait = kit::Wait::start(L, kGet, [http, id] { http->cancel(*id); });
    const uint64_t started = uv_hrtime();
    *id = http->send(std::move(req), [wait, url, started](HttpResponse r) {
      if (!r.error.empty()) return wait->fail(url + ": " + r.error);  // redacted by the wait
      const double seconds = static_cast<double>(uv_hrtime() - started) / 1e9;
      wait->resume([r = std::move(r), seconds](lua_State* L) {
        lua_createtable(L, 0, 3);
        lua_pushinteger(L, static_cast<lua_Integer>(r.status));
        lua_setfield(L, -2, "status");
        lua_pushlstring(L, r.body.data(), r.body.size());
        lua_setfield(L, -2, "body");
        lua_pushnumber(L, seconds);
        lua_setfield(L, -2, "seconds");
        return 1;
      });
    });
    return wait->yield(L);
  }

  static int start(lua_State* L) {
    auto& self = primitive_of(L);
    Context& ctx = *self.ctx_;
    auto [url, allow] = target(L, ctx, kStart);
    metrics::MetricsSampler::Options opt;
    if (!lua_isnoneornil(L, 2)) {
      args::table(L, 2, kStart, "options");
      args::only_fields(L, 2, kStart, {"interval", "prefix"});
      opt.interval_s = args::opt_number(L, 2, kStart, "interval").value_or(1.0);
      opt.prefix = args::opt_string(L, 2, kStart, "prefix").value_or("");
    }
    if (!(opt.interval_s >= 0.05 && opt.interval_s <= 3600))
      args::raise(L, "%s: option 'interval' must be 0.05 to 3600 seconds, got %g", kStart, opt.interval_s);
    if (ctx.stopping()) args::raise(L, "%s: the run is ending; no new sampler", kStart);
    opt.url = url;
    opt.allow_connect = allow;
    opt.reserve = [&ctx](std::size_t bytes) { return status_from(ctx.reserve_memory(bytes, "metrics samples")); };
    auto run = std::make_shared<RunScraper>();
    run->ctx = &ctx;
    const int number = static_cast<int>(self.samplers_.size()) + 1;
    run->sampler = std::make_unique<metrics::MetricsSampler>(ctx.loop(), std::move(opt), [&ctx, number](const std::string& p) {
      ctx.log("metrics: sampler " + std::to_string(number) + ": " + p);
    });
    run->sampler->start();
    self.samplers_.push_back(run);
    SamplerObject::push(L, run);
    return 1;
  }

  Context* ctx_ = nullptr;
  std::unique_ptr<HttpClient> http_;  // made on first use: a run that never scrapes never loads libcurl

  HttpClient& http() {
    if (!http_) http_ = std::make_unique<HttpClient>(ctx_->loop());
    return *http_;
  }
  std::vector<std::shared_ptr<RunScraper>> samplers_;
};

}  // namespace

std::unique_ptr<Primitive> make_metrics_primitive() { return std::make_unique<MetricsPrimitive>(); }

}  // namespace runara

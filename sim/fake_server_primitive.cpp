#include "sim/fake_server_primitive.hpp"

#include <uv.h>

#include <algorithm>
#include <string>
#include <vector>

#include "script/args.hpp"
#include "sim/fake_llm_server.hpp"

namespace runara {

namespace {

const char* const kFake = "http_load.fake_server";

class FakeServerPrimitive final : public Primitive {
 public:
  std::string name() const override { return "http_load"; }
  bool adds_to_existing() const override { return true; }

  void open(lua_State* L, Context&) override {
    lua_newtable(L);
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, &FakeServerPrimitive::fake_server, 1);
    lua_setfield(L, -2, "fake_server");
  }

  void teardown(Context&, std::function<void(std::string)> done) override {
    fakes_.clear();  // stops the simulated servers (joins their threads)
    done({});
  }

 private:
  static int fake_server(lua_State* L) {
    auto& self = *static_cast<FakeServerPrimitive*>(lua_touserdata(L, lua_upvalueindex(1)));
    auto& rt = Context::from(L);
    FakeLlmConfig config;
    if (!lua_isnoneornil(L, 1)) {
      args::table(L, 1, kFake, "options");
      args::only_fields(L, 1, kFake, {"model", "ttft_ms", "itl_ms", "output_tokens", "tokens_per_chunk", "usage",
                                      "error_500", "stall", "stall_ms", "disconnect", "malformed", "seed", "static_body",
                                      "tokenize", "tokenize_skew_pct", "prefill_ms_per_token", "prefix_cache_blocks",
                                      "block_size"});
      config.model = args::opt_string(L, 1, kFake, "model").value_or(config.model);
      config.ttft_ms = bounded(L, "ttft_ms", 0, 3.6e6);
      config.itl_ms = bounded(L, "itl_ms", 0, 3.6e6);
      config.prefill_ms_per_token = bounded(L, "prefill_ms_per_token", 0, 3.6e6);
      config.prefix_cache_blocks = static_cast<std::size_t>(bounded(L, "prefix_cache_blocks", 65536, 1 << 24));
      config.block_size = std::max(1, static_cast<int>(bounded(L, "block_size", 16, 4096)));
      config.output_tokens = static_cast<int>(bounded(L, "output_tokens", 16, 1e6));
      config.tokens_per_chunk = std::max(1, static_cast<int>(bounded(L, "tokens_per_chunk", 1, 1e4)));
      const std::string usage = args::opt_string(L, 1, kFake, "usage").value_or("request");
      if (usage == "always") config.usage = FakeLlmConfig::Usage::kAlways;
      else if (usage == "never") config.usage = FakeLlmConfig::Usage::kNever;
      else if (usage != "request") args::raise(L, "%s: option 'usage' must be \"request\", \"always\" or \"never\", got \"%s\"", kFake, usage.c_str());
      config.error_500_fraction = bounded(L, "error_500", 0, 1);
      config.stall_fraction = bounded(L, "stall", 0, 1);
      config.stall_ms = bounded(L, "stall_ms", 0, 3.6e6);
      config.disconnect_fraction = bounded(L, "disconnect", 0, 1);
      config.malformed_fraction = bounded(L, "malformed", 0, 1);
      config.seed = static_cast<std::uint64_t>(bounded(L, "seed", 42, 1e18));
      config.tokenize = args::opt_bool(L, 1, kFake, "tokenize").value_or(true);
      config.tokenize_skew_pct = args::opt_number(L, 1, kFake, "tokenize_skew_pct").value_or(0);
      if (!(config.tokenize_skew_pct >= -100 && config.tokenize_skew_pct <= 1000)) {
        args::raise(L, "%s: option 'tokenize_skew_pct' must be between -100 and 1000, got %g", kFake, config.tokenize_skew_pct);
      }
      if (auto body = args::opt_string(L, 1, kFake, "static_body")) {
        config.serve_static = true;
        config.static_body = *body;
      }
    }
    auto server = std::make_unique<FakeLlmServer>(config);
    const int port = server->start(0);
    if (port <= 0) args::raise(L, "%s: could not start: %s", kFake, uv_strerror(port));
    rt.add_reachable("127.0.0.1", port);
    rt.log("simulated LLM server at http://127.0.0.1:" + std::to_string(port));
    self.fakes_.push_back(std::move(server));
    lua_createtable(L, 0, 3);
    const std::string url = "http://127.0.0.1:" + std::to_string(port);
    lua_pushlstring(L, url.data(), url.size());
    lua_setfield(L, -2, "url");
    lua_pushlstring(L, config.model.data(), config.model.size());
    lua_setfield(L, -2, "model");
    lua_pushinteger(L, port);
    lua_setfield(L, -2, "port");
    return 1;
  }

  // A fake_server option between 0 and max.
  static double bounded(lua_State* L, const char* field, double fallback, double max) {
    const auto v = args::opt_number(L, 1, kFake, field);
    if (!v) return fallback;
    if (!(*v >= 0) || *v > max) args::raise(L, "%s: option '%s' must be between 0 and %g, got %g", kFake, field, max, *v);
    return *v;
  }

  std::vector<std::unique_ptr<FakeLlmServer>> fakes_;
};

}  // namespace

std::unique_ptr<Primitive> make_fake_server_primitive() { return std::make_unique<FakeServerPrimitive>(); }

}  // namespace runara

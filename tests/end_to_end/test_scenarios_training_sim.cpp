// scripts/training.lua rehearsed on the simulated cloud (runara --sim): the whole suite with its
// tables, charts and teardown; the failures a training run meets (a size that does not fit, a
// rank that dies, out of memory, an unknown size) each a clear error, PARTIAL, droplet destroyed.
// And the shim behind it (sim/machine/lib/sim-train) against seed 001's own figures.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "sim_teardown_checks.hpp"
#include "test_text.hpp"

using namespace runara::test;
using nlohmann::json;

namespace {

const std::string kScript = std::string(RUNARA_SOURCE_DIR) + "/scripts/training.lua";

ChildResult rehearse(const std::string& out, std::vector<std::string> params, std::map<std::string, std::string> env = {},
                     std::vector<std::string> options = {}) {
  return run_sim(kScript, out, params, std::move(env), options);
}

json results(const std::string& out) { return json::parse(read_all(out + "/results.json")); }

// The shim's JSON lines for one part on a simulated GPU, time not simulated.
std::vector<json> shim_lines(const std::string& gpu, std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv{std::string(RUNARA_SOURCE_DIR) + "/sim/machine/lib/sim-train"};
  argv.insert(argv.end(), args.begin(), args.end());
  env["RUNARA_SIM_GPU"] = gpu;
  env.emplace("RUNARA_SIM_GPU_COUNT", "8");
  env["RUNARA_SIM_TIME_SCALE"] = "0";
  env["RUNARA_SIM_STATE"] = temp_dir("sim-train");
  ChildProcess p(argv, env);
  const ChildResult r = p.wait(30);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<json> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));  // stdout: JSON lines only
  return lines;
}

}  // namespace

TEST_CASE("training under --sim: every part, tables beside the MI350X report, a headline, charts, a clean teardown", "[scenario]") {
  const std::string out = temp_dir("training") + "/out";
  // At a quarter of the simulated time a phase lasts about a second: samples 5 times a second.
  const auto r = rehearse(out, {"gpu_interval=0.2"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.seconds < 60);
  const json j = results(out);
  CHECK(j["report"]["status"] == "complete");
  const json& t = j["benchmarks"]["training"];
  CHECK(t["env"]["gpu"] == "AMD Instinct MI300X");
  CHECK(t["matmul"].size() == 6);  // 4096, 8192, 16384 × FP16, BF16
  REQUIRE(t["transformer"].size() == 8);
  for (const auto& x : t["transformer"]) {
    INFO(x.dump());
    CHECK(x["status"] == "ok");  // all eight fit in 192 GB
    CHECK(x["mfu"].get<double>() > 0.03);
    CHECK(x["mfu"].get<double>() < 0.6);
    // 6·N·tokens/s, the formula the report states
    CHECK(x["model_tflops"].get<double>() ==
          Approx(6 * x["params"].get<double>() * x["tokens_per_s"].get<double>() / 1e12).epsilon(1e-9));
  }
  CHECK(t["ddp"].size() == 1);  // a 1-GPU machine: DDP on 1 GPU only, the rest left out and said so
  CHECK(t["ddp_left_out"]["gpus"].size() == 3);
  CHECK(t["energy"][0]["joules_per_token"].get<double>() > 0);
  const std::string md = read_all(out + "/report.md");
  CHECK(contains(md, "## GPT-style training"));
  CHECK(contains(md, "| 7b | 1 | 5.24B | 8 | 1024 |"));
  CHECK(contains(md, "MI350X columns: \"AMD MI350X Training Benchmark Results\""));
  CHECK_FALSE(contains(md, "seed 0"));      // no internal names in the report
  CHECK_FALSE(contains(md, "shared/seeds"));
  // The suite's own headline: in the summary (before power and VRAM), report.md and results.json
  CHECK(contains(r.out, "training 13b (one GPU)"));
  CHECK(contains(r.out, "MFU, training 13b"));
  CHECK(r.out.find("training 13b (one GPU)") < r.out.find("peak GPU power"));
  CHECK(contains(md, "## Headline"));
  CHECK(j["headline"].size() >= 3);
  CHECK_FALSE(contains(r.out, "{\"part\": "));  // the raw lines go to train_bench.jsonl, not the terminal
  CHECK(contains(md, "## Energy per training token"));
  const std::string html = read_all(out + "/report.html");
  CHECK(contains(html, "data-series=\"MI350X (published)\""));
  CHECK(contains(html, "<h2>DDP scaling efficiency</h2>"));
  CHECK(std::filesystem::exists(out + "/train_bench.jsonl"));
#ifdef RUNARA_CHROMIUM
  // As a browser shows it: the scenario's own charts drawn, their series there, nothing scripted.
  ChildProcess dump({RUNARA_CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + out + "/report.html"});
  const ChildResult d = dump.wait(60);
  INFO(d.err);
  REQUIRE(d.exit_code == 0);
  CHECK(contains(d.out, "<h2>DDP scaling efficiency</h2>"));
  CHECK(contains(d.out, "data-series=\"MI350X (published)\""));
  CHECK(contains(d.out, "<table"));
  CHECK(contains(d.out, "class=\"mark\""));  // the phases on the GPU charts
  CHECK_FALSE(contains(d.out, "<script"));
#endif
  check_torn_down(r, out);
}

TEST_CASE("training under --sim on 8 GPUs: DDP scaling below 1, then a rank dies: PARTIAL, NCCL's text", "[scenario]") {
  const std::string out = temp_dir("training-ddp") + "/out";
  const auto ok = rehearse(out, {"size=gpu-mi300x8-1536gb", "parts=ddp"}, {}, {"--budget", "40"});
  INFO(ok.out << ok.err);
  REQUIRE(ok.exit_code == 0);
  const json s = results(out)["benchmarks"]["training"]["scaling"]["7b"];
  REQUIRE(s.size() == 4);
  for (size_t i = 1; i < s.size(); ++i) CHECK(s[i]["efficiency"].get<double>() < 1);
  check_torn_down(ok, out);

  const std::string out2 = temp_dir("training-rank") + "/out";
  const auto r = rehearse(out2, {"size=gpu-mi300x8-1536gb", "parts=ddp"}, {{"RUNARA_SIM_FAULTS", "rank_dies"}}, {"--budget", "40"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "DDP on 2 GPUs (torchrun)"));
  CHECK(contains(r.err, "rank 1 died"));
  CHECK(contains(r.err, "remote process exited or there was a network error"));
  const json j = results(out2);
  CHECK(j["report"]["status"] == "partial");
  CHECK(j["benchmarks"]["training"]["ddp"].size() == 1);  // the 1-GPU run measured before it
  check_torn_down(r, out2);
}

TEST_CASE("training under --sim: a named size that does not fit, out of memory, an unknown size", "[scenario]") {
  const std::string out = temp_dir("training-oom") + "/out";
  // The size alone: its image and region follow it (runara.droplet_defaults).
  const auto r = rehearse(out, {"size=gpu-h100x1-80gb", "sizes=small,13b", "parts=transformer"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "(gpu-h100x1-80gb in nyc2, image gpu-h100x1-base,"));
  CHECK(contains(r.err, "size 13b does not fit on NVIDIA H100 80GB HBM3: it needs about"));
  const json j = results(out);
  CHECK(j["report"]["status"] == "partial");
  CHECK(j["benchmarks"]["training"]["transformer"][0]["status"] == "ok");  // small still measured
  CHECK(j["benchmarks"]["training"]["transformer"][1]["status"] == "skipped");
  check_torn_down(r, out);

  const std::string out2 = temp_dir("training-fault") + "/out";
  const auto f = rehearse(out2, {"parts=matmul,mlp"}, {{"RUNARA_SIM_FAULTS", "train_oom"}});
  INFO(f.out << f.err);
  CHECK(f.exit_code == 1);
  CHECK(contains(f.err, "torch.OutOfMemoryError: HIP out of memory"));
  CHECK(results(out2)["report"]["status"] == "partial");
  check_torn_down(f, out2);

  const std::string out3 = temp_dir("training-size") + "/out";
  const auto u = rehearse(out3, {"sizes=small,70b"});
  CHECK(u.exit_code == 2);  // the command line's mistake: a usage error, no script line, no folder
  CHECK_FALSE(contains(u.err, "training.lua:"));
  CHECK(contains(u.err, "runara: param sizes=small,70b: unknown size '70b'; known: small, medium, large, xl, 1.5b, 3b, 7b, 13b"));
  CHECK_FALSE(std::filesystem::exists(out3));
}

TEST_CASE("sim-train reproduces seed 001's MI350X figures for the sizes it lists", "[sim]") {
  const auto lines = shim_lines("mi350x", {"--parts", "transformer,mlp,matmul"});
  const std::map<std::string, double> seed_tokens{{"small", 950586}, {"medium", 298957}, {"large", 107626}, {"xl", 40054},
                                                  {"1.5b", 24195}, {"3b", 11980}, {"7b", 18381}, {"13b", 7941}};
  int seen = 0;
  for (const auto& x : lines) {
    INFO(x.dump());
    if (x["part"] == "transformer") {
      CHECK(x["tokens_per_s"].get<double>() == Approx(seed_tokens.at(x["size"])).epsilon(0.02));
      ++seen;
    } else if (x["part"] == "mlp") {
      CHECK(x["samples_per_s"].get<double>() == Approx(124517).epsilon(0.02));
    } else if (x["part"] == "matmul" && x["dtype"] == "fp16" && x["n"] == 16384) {
      CHECK(x["tflops"].get<double>() == Approx(1022).epsilon(0.02));
    }
  }
  CHECK(seen == 8);
  for (const auto& [g, want] : std::map<int, double>{{2, 28451}, {4, 62813}, {8, 70763}}) {
    const auto d = shim_lines("mi350x", {"--parts", "ddp", "--sizes", "7b"}, {{"SIM_TRAIN_NPROC", std::to_string(g)}});
    CHECK(d.back()["tokens_per_s"].get<double>() == Approx(want).epsilon(0.02));
  }
  // 13B does not fit an H100's 80 GB: skipped with what it needed, never a crash.
  const auto h = shim_lines("h100", {"--parts", "transformer", "--sizes", "13b"});
  CHECK(h.back()["status"] == "skipped");
  CHECK(h.back()["estimated_bytes"].get<double>() > h.back()["memory_total_bytes"].get<double>());
}

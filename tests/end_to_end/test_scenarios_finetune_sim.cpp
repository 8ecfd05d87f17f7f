// scripts/finetune.lua and scripts/compare_training.lua rehearsed on the simulated cloud (runara
// --sim): torchtune's log read into the report beside seed 001, a clean teardown, and the failures
// a fine-tuning run meets (a full fine-tune that does not fit, a gated model without a token — before
// anything is created, and as Hugging Face's 401 at download —, FP8 where the recipe has none), each a
// clear error or row, PARTIAL, droplet destroyed. And both vendors' training suites in one report.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "sim_teardown_checks.hpp"
#include "test_text.hpp"

using namespace runara::test;
using nlohmann::json;

namespace {

ChildResult rehearse(const std::string& script, const std::string& out, std::vector<std::string> params,
                     std::map<std::string, std::string> env = {}) {
  return run_sim(std::string(RUNARA_SOURCE_DIR) + "/scripts/" + script, out, params, std::move(env));
}

json results(const std::string& out) { return json::parse(read_all(out + "/results.json")); }

// Nothing was rented: the run stopped before its first droplet.
void check_nothing_created(const ChildResult& r) {
  CHECK_FALSE(contains(r.err, "creating droplet"));
  CHECK_FALSE(contains(r.err, "is gone"));
}

}  // namespace

TEST_CASE("finetune under --sim: LoRA of Qwen3-8B, torchtune's log read back, beside the MI350X report, a headline, a clean teardown", "[scenario]") {
  const std::string out = temp_dir("finetune") + "/out";
  // At a quarter of the simulated time the fine-tuning lasts about a second: sample 5 times a second.
  const auto r = rehearse("finetune.lua", out, {"gpu_interval=0.2"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.seconds < 60);
  const json j = results(out);
  CHECK(j["report"]["status"] == "complete");
  const json& f = j["benchmarks"]["finetune"];
  CHECK(f["status"] == "ok");
  CHECK(f["config"] == "qwen3/8B_lora");
  REQUIRE(f["steps"].size() == 20);
  const json& s = f["summary"];
  CHECK(s["from_step"] == 11);  // MAD's last half of 20 steps
  // The mean of steps 11..20 of the log, recomputed here from the steps the report kept.
  double sum = 0;
  for (int i = 10; i < 20; ++i) sum += f["steps"][i]["tokens_per_second_per_gpu"].get<double>();
  CHECK(s["tokens_per_s_per_gpu"].get<double>() == Approx(sum / 10).epsilon(1e-9));
  CHECK(s["tokens_per_s"].get<double>() == Approx(s["tokens_per_s_per_gpu"].get<double>()).epsilon(1e-9));  // one GPU
  // sim-tune's model: seed 001's LoRA figure scaled by the MI300X's achieved GEMM (620 of 1104).
  CHECK(s["tokens_per_s_per_gpu"].get<double>() == Approx(16312.0 * 620 / 1104).epsilon(0.05));
  CHECK(s["loss_last"].get<double>() < s["loss_first"].get<double>());
  CHECK(f["reference"]["tokens_per_s_per_gpu"] == 16312);
  CHECK(f["energy"]["joules_per_token"].get<double>() > 0);
  const std::string log = read_all(out + "/torchtune_log.txt");
  CHECK(log.rfind("Step 1 | loss:", 0) == 0);  // the DiskLogger file, fetched from the machine
  CHECK(contains(log, " peak_memory_alloc:"));
  const std::string md = read_all(out + "/report.md");
  CHECK(contains(md, "## Fine-tuning (torchtune)"));
  CHECK(contains(md, "| tokens/s per GPU |"));
  CHECK(contains(md, "| 16312 |"));
  CHECK(contains(md, "Benchmark 5: MAD Framework Training (Qwen3-8B)"));
  const std::string html = read_all(out + "/report.html");
  CHECK(contains(html, "<h2>Loss curve</h2>"));
  CHECK(contains(html, "data-series=\"MI350X LoRA (published)\""));
  CHECK(contains(md, "| finetune |"));  // the GPU by phase row of the fine-tuning
  // Its own headline: tokens/s per GPU and the loss, first in the summary, in report.md
  CHECK(contains(r.out, "fine-tuning, per GPU"));
  CHECK(contains(r.out, "loss first → last"));
  CHECK(r.out.find("fine-tuning, per GPU") < r.out.find("peak GPU power"));
  CHECK(contains(md, "## Headline"));
  CHECK_FALSE(contains(md, "seed 0"));
  check_torn_down(r, out);
}

TEST_CASE("finetune under --sim: a full fine-tune that does not fit an H100 is PyTorch's OOM, PARTIAL, droplet destroyed", "[scenario]") {
  const std::string out = temp_dir("finetune-oom") + "/out";
  const auto r = rehearse("finetune.lua", out, {"size=gpu-h100x1-80gb", "image=gpu-h100x1-base", "region=nyc2", "method=full", "dtype=fp8"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.seconds < 60);
  CHECK(contains(r.err, "finetune: full fine-tuning of Qwen/Qwen3-8B on finetune-"));
  CHECK(contains(r.err, "torch.OutOfMemoryError: CUDA out of memory"));
  CHECK(contains(r.err, "batch=14 does not fit"));
  const json j = results(out);
  CHECK(j["report"]["status"] == "partial");
  CHECK(j["benchmarks"]["finetune"]["dtype"] == "fp8");
  check_torn_down(r, out);

  // The same model with LoRA at a batch that fits trains on the H100.
  const std::string out2 = temp_dir("finetune-h100") + "/out";
  const auto ok = rehearse("finetune.lua", out2, {"size=gpu-h100x1-80gb", "image=gpu-h100x1-base", "region=nyc2", "batch=4", "steps=6"});
  INFO(ok.out << ok.err);
  REQUIRE(ok.exit_code == 0);
  CHECK(results(out2)["benchmarks"]["finetune"]["summary"]["steps"] == 6);
  CHECK(results(out2)["benchmarks"]["finetune"]["image"] == "nvcr.io/nvidia/pytorch:24.10-py3");
  check_torn_down(ok, out2);
}

TEST_CASE("finetune under --sim: a gated model without a token, FP8 LoRA, an unknown model", "[scenario]") {
  // Known to be gated: refused before anything is created, naming the secret to give.
  const std::string out = temp_dir("finetune-gated") + "/out";
  const auto g = rehearse("finetune.lua", out, {"model=meta-llama/Llama-3.1-8B-Instruct"});
  INFO(g.out << g.err);
  CHECK(g.exit_code == 1);
  CHECK(contains(g.err, "meta-llama/Llama-3.1-8B-Instruct is gated on Hugging Face"));
  CHECK(contains(g.err, "--secret HF_TOKEN"));
  check_nothing_created(g);
  CHECK(results(out)["report"]["status"] == "partial");

  // Said not to be gated: Hugging Face's own 401 at download, turned into the same advice.
  const std::string out2 = temp_dir("finetune-401") + "/out";
  const auto h = rehearse("finetune.lua", out2, {"model=meta-llama/Llama-3.1-8B-Instruct", "gated=no"});
  INFO(h.out << h.err);
  CHECK(h.exit_code == 1);
  CHECK(contains(h.err, "Hugging Face refused the download of meta-llama/Llama-3.1-8B-Instruct"));
  CHECK(contains(h.err, "Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/"));
  CHECK(contains(h.err, "run with --secret HF_TOKEN"));
  CHECK(results(out2)["report"]["status"] == "partial");
  check_torn_down(h, out2);

  // LoRA has no FP8 recipe: a "not available" row, no figure, nothing rented.
  const std::string out3 = temp_dir("finetune-fp8") + "/out";
  const auto n = rehearse("finetune.lua", out3, {"dtype=fp8"});
  INFO(n.out << n.err);
  CHECK(n.exit_code == 0);
  check_nothing_created(n);
  const json j = results(out3);
  CHECK(j["benchmarks"]["finetune"]["status"] == "not available");
  CHECK(contains(read_all(out3 + "/report.md"), "not available: torchtune's lora_finetune_distributed recipe has no FP8 training"));

  const std::string out4 = temp_dir("finetune-model") + "/out";
  const auto u = rehearse("finetune.lua", out4, {"model=acme/Unknown-7B"});
  CHECK(u.exit_code == 2);  // a setup mistake: a usage error, no traceback, no folder
  CHECK_FALSE(contains(u.err, "stack traceback"));
  CHECK_FALSE(std::filesystem::exists(out4));
  CHECK(contains(u.err, "param model=acme/Unknown-7B: runara knows no torchtune config for it; give config=FAMILY/SIZE"));
  check_nothing_created(u);
}

TEST_CASE("compare_training under --sim: MI300X and H100 side by side in one report, a failing side PARTIAL", "[scenario]") {
  const std::string out = temp_dir("compare-training") + "/out";
  const auto r = rehearse("compare_training.lua", out, {"sizes=small,large,7b"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.seconds < 60);
  const json j = results(out);
  CHECK(j["report"]["status"] == "complete");
  const json& sides = j["benchmarks"]["training_comparison"]["sides"];
  CHECK(sides["mi300x"]["env"]["gpu"] == "AMD Instinct MI300X");
  CHECK(sides["h100"]["env"]["gpu"] == "NVIDIA H100 80GB HBM3");
  REQUIRE(sides["h100"]["transformer"].size() == 3);
  CHECK(sides["h100"]["transformer"][2]["status"] == "skipped");  // 7b does not fit 80 GB
  CHECK(sides["mi300x"]["transformer"][2]["status"] == "ok");
  const std::string md = read_all(out + "/report.md");
  CHECK(contains(md, "## GPT-style training: MI300X vs H100"));
  CHECK(contains(md, "## Matmul TFLOPS: MI300X vs H100"));
  const std::string html = read_all(out + "/report.html");
  CHECK(contains(html, "data-series=\"MI300X\""));
  CHECK(contains(html, "data-series=\"H100\""));
  check_torn_down(r, out, 2);

  const std::string out2 = temp_dir("compare-training-oom") + "/out";
  const auto f = rehearse("compare_training.lua", out2, {"parts=matmul,mlp"}, {{"RUNARA_SIM_FAULTS", "train_oom"}});
  INFO(f.out << f.err);
  CHECK(f.exit_code == 1);
  CHECK(contains(f.err, "machines failed"));
  CHECK(contains(f.err, "torch.OutOfMemoryError"));
  const json k = results(out2);
  CHECK(k["report"]["status"] == "partial");
  CHECK(k["benchmarks"]["training_comparison"]["sides"]["mi300x"]["matmul"].size() == 6);  // measured before the MLP died
  check_torn_down(f, out2, 2);
}

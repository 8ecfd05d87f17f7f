// Every scenario in scripts/ and examples/ rehearsed on the simulated cloud (runara --sim): it
// runs to the end, writes its reports with the fields and simulated ranges the scenario promises,
// leaks no secret into any file, and leaves its machines destroyed. A failure halfway still
// writes a partial report. report.html is rendered in headless Chromium where it is installed.
#include <catch2/catch.hpp>

#include <sys/utsname.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "sim_teardown_checks.hpp"
#include "eventually.hpp"
#include "test_processes.hpp"
#include "test_text.hpp"

using namespace runara::test;
using nlohmann::json;

namespace {

const std::string kScripts = std::string(RUNARA_SOURCE_DIR) + "/scripts/";
const std::string kSecret = "hf_TEST_SECRET_5f0c1e7d9a";

json results(const std::string& out) { return json::parse(read_all(out + "/results.json")); }

// Runs a scenario under --sim with HF_TOKEN granted (so it could leak), in `out`.
ChildResult rehearse(const std::string& script, const std::string& out, std::vector<std::string> params = {},
                     std::map<std::string, std::string> env = {}) {
  std::vector<std::string> args{"--sim", "--secret", "HF_TOKEN", "--out", out, kScripts + script};
  args.insert(args.end(), params.begin(), params.end());
  env["HF_TOKEN"] = kSecret;
  std::filesystem::create_directories(sim_tmp(out));
  env["TMPDIR"] = sim_tmp(out);
  return run_runara(args, 240, env);
}

void check_no_secret_anywhere(const std::string& out) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(out)) {
    if (!entry.is_regular_file()) continue;
    INFO(entry.path());
    CHECK(read_all(entry.path()).find(kSecret) == std::string::npos);
  }
}


// Circles a chart series holds in report.html.
int points_of(const std::string& html, const std::string& series) {
  const auto at = html.find("data-series=\"" + series + "\"");
  if (at == std::string::npos) return -1;
  const auto end = html.find("</g>", at);
  int n = 0;
  for (auto p = html.find("<circle", at); p != std::string::npos && p < end; p = html.find("<circle", p + 1)) ++n;
  return n;
}

// The run manifest (issue 26) of a flagship rehearsal: every field, read on the simulated machine
// (its shims answer), or unknown with the reason where it cannot tell (no model is downloaded);
// the cost and efficiency figures, their units, and the cost labelled with when it was read.
void check_manifest_and_costs(const json& j, const std::string& out) {
  const json& man = j["manifest"];
  INFO(man.dump(2));
  CHECK(man["runara"]["version"] == j["run"]["runara_version"]);
  const std::string run_id = man["runara"]["run_id"];
  CHECK(run_id.size() == 8);
  ChildProcess sum({"/usr/bin/sha256sum", kScripts + "llama70b_fp8.lua"});
  CHECK(man["script"]["sha256"] == sum.wait(10).out.substr(0, 64));  // the script's own bytes
  CHECK(man["params"]["size"] == "gpu-mi300x1-192gb");
  CHECK(man["params"]["profile"] == "quick");
  for (const char* load : {"throughput", "ttft", "concurrent_10", "concurrent_32"}) {
    INFO(load);
    CHECK(man["seeds"][load] == 0);
    CHECK(man["prompt_sets"][load]["sha256"].get<std::string>().size() == 64);
  }
  // The 256-token loads draw their prompts from the same definition, TTFT's (32 tokens) from another.
  CHECK(man["prompt_sets"]["concurrent_10"]["sha256"] == man["prompt_sets"]["concurrent_32"]["sha256"]);
  CHECK(man["prompt_sets"]["throughput"]["sha256"] == man["prompt_sets"]["concurrent_32"]["sha256"]);
  CHECK(man["prompt_sets"]["ttft"]["sha256"] != man["prompt_sets"]["concurrent_32"]["sha256"]);
  CHECK(man["tokenizer"]["client"] == "meta-llama/Llama-3.3-70B-Instruct");
  const json& m = man["machines"][0];
  CHECK(m["kind"] == "droplet");
  CHECK(m["size"] == "gpu-mi300x1-192gb");
  CHECK(m["region"] == "atl1");
  CHECK(m["image"] == "gpu-amd-base");
  CHECK(m["price_usd_per_hour"] == 1.99);
  CHECK(m["gpu"] == "AMD Instinct MI300X");
  CHECK(m["gpu_count"] == 1);
  CHECK(m["gpu_vram_gib"] == 192);
  CHECK(m["driver_version"] == "6.8.5");
  CHECK(m["rocm_version"] == "6.2.0");
  CHECK_FALSE(m.contains("cuda_version"));
  struct utsname u {};
  REQUIRE(uname(&u) == 0);
  CHECK(m["kernel"] == u.release);  // the simulated machine is this computer
  CHECK(m["arch"] == u.machine);
  CHECK(m["os"].is_string());
  const json& s = man["serving"][0];
  CHECK(s["mode"] == "docker");
  CHECK(s["image"] == "rocm/vllm:latest");
  CHECK(s["image_digest"] == "rocm/vllm@sha256:" + std::string(64, '0'));  // the simulated docker's
  CHECK(s["vllm_version"] == "0.6.4.post2.dev+rocm624");
  const std::string cmd = s["command"];
  CHECK(cmd.rfind("docker run --rm --name runara-vllm-" + run_id + " ", 0) == 0);
  CHECK(contains(cmd, "--entrypoint vllm rocm/vllm:latest serve 'meta-llama/Llama-3.3-70B-Instruct' --host 127.0.0.1 --port 8000"));
  CHECK(contains(cmd, "--quantization 'fp8'"));
  CHECK_FALSE(contains(cmd, kSecret));
  CHECK(s["model"] == "meta-llama/Llama-3.3-70B-Instruct");
  // No model is downloaded on the simulated machine: its revision is unknown, and says why.
  CHECK(s["model_revision"].get<std::string>().rfind("unknown (no revision in the machine's Hugging Face cache: cat: ", 0) == 0);
  const std::string md = read_all(out + "/report.md");
  CHECK(contains(md, "\n## Manifest\n"));
  CHECK(contains(md, "| vLLM | version 0.6.4.post2.dev+rocm624 |"));
  CHECK(contains(read_all(out + "/report.html"), "<table id=\"manifest\">"));

  // Cost and efficiency: each load's against its own figures, the headline's, GiB everywhere.
  const json& b = j["benchmarks"];
  const json& c32 = b["loads"]["concurrent_32"];
  const double steady = 1.99 * c32["duration"].get<double>() / 3600;
  CHECK(c32["usd_per_million_output_tokens"].get<double>() ==
        Approx(steady / c32["total_output_tokens"].get<double>() * 1e6).epsilon(1e-9));
  CHECK(c32["usd_per_million_total_tokens"].get<double>() ==
        Approx(steady / (c32["total_output_tokens"].get<double>() + c32["total_input_tokens"].get<double>()) * 1e6).epsilon(1e-9));
  CHECK(c32["interactivity_tokens_per_s_per_user"].get<double>() == Approx(1000 / c32["median_tpot_ms"].get<double>()));
  CHECK(c32["output_tokens_per_s_per_gpu"] == c32["output_throughput"]);
  CHECK(c32["output_tokens_per_joule"].get<double>() > 0);
  CHECK(c32["energy_source"] == "counter");  // the simulated MI300X's counter agrees with its power
  const json& e = b["efficiency"];
  CHECK(e["load"] == "concurrent_32");
  CHECK(e["all_in"]["cost_usd"] == j["metadata"]["cost_usd"]);
  CHECK(e["all_in"]["usd_per_million_output_tokens"].get<double>() > c32["usd_per_million_output_tokens"].get<double>());
  double shares = 0;
  for (const auto& [name, load] : b["loads"].items()) shares += load["cost_usd_all_in"].get<double>();
  CHECK(shares == Approx(j["metadata"]["cost_usd"].get<double>()).epsilon(1e-9));
  CHECK(b["memory"]["vram_peak_gib"].get<double>() ==
        Approx(b["memory"]["vram_peak_gb"].get<double>() * 1e9 / (1024.0 * 1024 * 1024)).margin(0.1));
  CHECK(contains(md, "AMD Instinct MI300X · 192 GiB each"));
  CHECK_FALSE(contains(md, " GB each"));
  CHECK(contains(md, "\n## Cost and efficiency\n"));
  // The report's cost is read before teardown; run.log gives it, and the final bill after it.
  CHECK(j["metadata"]["cost_usd"].get<double>() <= j["run"]["total_cost_usd"].get<double>());
  CHECK(contains(md, "before teardown"));
  const std::string log = read_all(out + "/run.log");
  CHECK(contains(log, "report: machines' cost so far $"));
  CHECK(log.find("report: machines' cost so far $") < log.find("machines of this run cost $"));
}

}  // namespace

TEST_CASE("llama70b_fp8 under --sim: seed 000's results, reports and a clean teardown", "[scenario]") {
  const std::string out = temp_dir("flagship") + "/out";
  const auto r = rehearse("llama70b_fp8.lua", out);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json j = results(out);
  CHECK(j["metadata"]["gpu"] == "AMD Instinct MI300X");
  CHECK(j["metadata"]["simulated"] == true);
  CHECK(j["metadata"]["rocm_version"] == "6.2.0");
  CHECK(j["metadata"]["framework"].get<std::string>().rfind("vLLM 0.6", 0) == 0);
  const json& b = j["benchmarks"];
  // The simulated MI300X's latency model: ~19.4 ms ITL single stream, ~90 ms + prefill TTFT.
  CHECK(b["throughput"]["tokens_per_second"].get<double>() > 35);
  CHECK(b["throughput"]["tokens_per_second"].get<double>() < 55);
  CHECK(b["latency"]["time_to_first_token_ms"].get<double>() > 80);
  CHECK(b["latency"]["time_to_first_token_ms"].get<double>() < 200);
  CHECK(b["concurrent"]["32_requests_tokens_per_second"].get<double>() >
        b["concurrent"]["10_requests_tokens_per_second"].get<double>());
  CHECK(b["memory"]["vram_peak_gib"].get<double>() > 150);  // 0.9 of 192 GiB, as vLLM reserves it
  CHECK(b["power"]["peak_w"].get<double>() > 300);
  CHECK(b["power"]["peak_w"].get<double>() <= 750);
  CHECK(j["report"]["status"] == "complete");
  // comparable_nvidia: published MLPerf v4.1 measurements with their source and conditions, no ratio
  const json& c = j["comparable_nvidia"];
  CHECK(c["reference"] == "MLPerf v4.1 8\u00d7 H100, per GPU (other conditions)");
  CHECK(c["like_for_like"] == false);
  CHECK_FALSE(c.contains("h100_equivalent_throughput_ratio"));
  CHECK(c["notes"].get<std::string>().rfind("SIMULATED figures, beside MLPerf v4.1", 0) == 0);
  CHECK(c["source"].get<std::string>().find("inference_results_v4.1") != std::string::npos);
  CHECK(c["conditions"].get<std::string>().find("Llama-2-70B, not Llama-3.3-70B") != std::string::npos);
  // VRAM as what it is: vLLM's allocation, with the KV cache its log gives
  CHECK(b["memory"]["kv_cache"]["gpu_blocks"] == 48392);
  CHECK(r.out.find("VRAM allocated by vLLM (gpu_memory_utilization=0.9)") != std::string::npos);
  CHECK(j["metadata"]["cost_usd"].get<double>() > 0);
  CHECK(j["run"]["status"] == "ok");
  const std::string md = read_all(out + "/report.md");
  CHECK(md.find("SIMULATED") != std::string::npos);
  CHECK(r.out.find("SIMULATED (runara --sim: no GPU ran") != std::string::npos);  // each printed summary says so
  CHECK(r.out.find("32 concurrent output") != std::string::npos);                 // the final summary
  // The simulated vLLM counts the synthetic prompts as the client does: nothing to warn of.
  CHECK(r.out.find("give the model's tokenizer") == std::string::npos);
  CHECK(json::parse(read_all(out + "/throughput/results.json"))["token_count_check"]["status"] == "ok");
  CHECK(md.find("| Throughput (tok/s) |") != std::string::npos);
  CHECK(md.find("| concurrent_32 | 32 | 64 / 0 |") != std::string::npos);
  const std::string html = read_all(out + "/report.html");
  CHECK(points_of(html, "output tok/s") == 3);  // concurrency 1, 10, 32
  CHECK(points_of(html, "TTFT p99") == 3);
  CHECK(points_of(html, "power GPU 0") > 10);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(std::filesystem::exists(out + "/logs/vllm.log"));
  check_manifest_and_costs(j, out);
  check_no_secret_anywhere(out);
  check_torn_down(r, out);
}

TEST_CASE("llama70b_fp8 under --sim with a server that never gets ready: partial report, droplet destroyed",
          "[scenario]") {
  const std::string out = temp_dir("flagship-fail") + "/out";
  // The shim's loading takes 1 s of sleeps at this scale, plus its forks on a slow, loaded CI
  // machine: 8 s leaves room for the "never answers" line to be in the log's tail.
  const auto r = rehearse("llama70b_fp8.lua", out, {"ready_timeout=8"},
                          {{"RUNARA_SIM_FAULTS", "vllm_never_ready"}, {"RUNARA_SIM_TIME_SCALE", "0.1"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("was not ready after 8 s") != std::string::npos);
  const json j = results(out);
  CHECK(j["report"]["status"] == "partial");
  CHECK(j["report"]["error"].get<std::string>().find("never answers") != std::string::npos);  // the log's tail
  CHECK(j["metadata"]["gpu"] == "AMD Instinct MI300X");  // what was learnt before the failure
  CHECK(j["metadata"]["cost_usd"].get<double>() > 0);    // what it cost up to then
  CHECK(j["run"]["status"] == "failed");
  CHECK(read_all(out + "/report.md").find("PARTIAL") != std::string::npos);
  CHECK(read_all(out + "/report.html").find("id=\"partial\"") != std::string::npos);
  check_no_secret_anywhere(out);
  check_torn_down(r, out);
}

TEST_CASE("llama70b_fp8 under --sim with a server that crashes while loading: partial report", "[scenario]") {
  const std::string out = temp_dir("flagship-crash") + "/out";
  const auto r = rehearse("llama70b_fp8.lua", out, {"mode=pip"}, {{"RUNARA_SIM_FAULTS", "vllm_crash"}, {"RUNARA_SIM_TIME_SCALE", "0.25"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("exited before it was ready") != std::string::npos);
  CHECK(r.err.find("HIP out of memory") != std::string::npos);
  CHECK(results(out)["report"]["status"] == "partial");
  check_torn_down(r, out);
}

TEST_CASE("llama70b_fp8 under --sim when the machine dies mid-benchmark: partial report, droplet destroyed",
          "[scenario]") {
  const std::string out = temp_dir("flagship-dies") + "/out";
  const auto r = rehearse("llama70b_fp8.lua", out, {}, {{"RUNARA_SIM_FAULTS", "machine_dies"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const json j = results(out);
  CHECK(j["report"]["status"] == "partial");
  CHECK(j["metadata"]["framework"].get<std::string>().rfind("vLLM", 0) == 0);  // it got that far
  CHECK(read_all(out + "/report.md").find("PARTIAL") != std::string::npos);
  check_torn_down(r, out);
}

TEST_CASE("serving_sweep under --sim: one row and one chart point per level", "[scenario]") {
  const std::string out = temp_dir("sweep") + "/out";
  const auto r = rehearse("serving_sweep.lua", out, {"levels=64,256"}, {{"RUNARA_SIM_TIME_SCALE", "0.25"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json j = results(out);
  REQUIRE(j["benchmarks"]["sweep"].size() == 2);
  CHECK(j["benchmarks"]["sweep"][1]["max_concurrency"] == 256);
  CHECK(j["benchmarks"]["sweep"][1]["failed"] == 0);
  CHECK(j["benchmarks"]["vllm_metrics"].is_object());
  CHECK(points_of(read_all(out + "/report.html"), "output tok/s") == 2);
  check_no_secret_anywhere(out);
  check_torn_down(r, out);
}

TEST_CASE("gemm under --sim: a TFLOPS row per shape and dtype", "[scenario]") {
  const std::string out = temp_dir("gemm") + "/out";
  const auto r = rehearse("gemm.lua", out, {}, {{"RUNARA_SIM_TIME_SCALE", "0.25"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json g = results(out)["benchmarks"]["gemm"];
  REQUIRE(g["results"].size() == 14);  // 7 Llama-70B shapes × FP16, BF16
  CHECK(g["peak_tflops"]["bf16"].get<double>() > 500);
  CHECK(g["peak_tflops"]["bf16"].get<double>() < 800);
  CHECK(read_all(out + "/report.md").find("| (16384, 8192, 1280) | Fused QKV Projection | bf16 |") != std::string::npos);
  // Its own headline, the best TFLOPS per dtype, first in the summary; the raw lines in gemm.jsonl only
  CHECK(r.out.find("best BF16 GEMM (one GPU)") != std::string::npos);
  CHECK(r.out.find("best BF16 GEMM (one GPU)") < r.out.find("peak GPU power"));
  CHECK(r.out.find("\"tflops\"") == std::string::npos);
  CHECK(read_all(out + "/gemm.jsonl").find("\"tflops\"") != std::string::npos);
  CHECK(read_all(out + "/report.md").find("seed 0") == std::string::npos);
  check_torn_down(r, out);
}

TEST_CASE("mlperf_llama2_70b under --sim: both scenarios' summaries parsed", "[scenario]") {
  const std::string out = temp_dir("mlperf") + "/out";
  const auto r = rehearse("mlperf_llama2_70b.lua", out, {}, {{"RUNARA_SIM_TIME_SCALE", "0.25"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json m = results(out)["benchmarks"]["mlperf"];
  CHECK(m["Offline"]["valid"] == true);
  CHECK(m["Offline"]["tokens_per_second"].get<double>() > 20000);  // 8 simulated GPUs, v4.1's figure
  CHECK(m["Server"]["valid"] == true);
  CHECK(m["Server"]["latencies_ns"].size() > 3);
  CHECK(std::filesystem::exists(out + "/logs/mlperf/mlperf-results"));
  // Its own headline: samples/s and validity per scenario; power and VRAM labelled per GPU
  CHECK(r.out.find("MLPerf Offline, all GPUs") != std::string::npos);
  CHECK(r.out.find("MLPerf Server result") != std::string::npos);
  CHECK(r.out.find("peak power per GPU (highest of 8)") != std::string::npos);
  CHECK(r.out.find("[LoadGen]") == std::string::npos);  // the harness's output is in ssh/<machine>.log
  const std::string md = read_all(out + "/report.md");
  CHECK(md.find("| MLPerf Offline result | VALID |") != std::string::npos);
  CHECK(md.find("seed 0") == std::string::npos);
  check_torn_down(r, out);
}

TEST_CASE("compare_mi300x_h100 under --sim: two machines at once, one comparison", "[scenario]") {
  const std::string out = temp_dir("compare") + "/out";
  const auto r = rehearse("compare_mi300x_h100.lua", out, {}, {{"RUNARA_SIM_TIME_SCALE", "0.25"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json j = results(out);
  CHECK(j["machines"]["mi300x"]["gpu"] == "AMD Instinct MI300X");
  CHECK(j["machines"]["h100"]["gpu"] == "NVIDIA H100 80GB HBM3");
  CHECK(j["machines"]["h100"]["cuda_version"] == "13.1");
  // Both machines measured, each within its simulated range (the flagship's 35-55 tok/s for the
  // MI300X, time running 4 times faster here: RUNARA_SIM_TIME_SCALE=0.25).
  const json& loads = j["benchmarks"]["loads"];
  INFO(loads.dump());
  CHECK(loads["MI300X throughput"]["output_throughput"].get<double>() * 0.25 > 35);
  CHECK(loads["MI300X throughput"]["output_throughput"].get<double>() * 0.25 < 55);
  CHECK(loads["H100 throughput"]["output_throughput"].get<double>() > 0);
  CHECK(j["machines"]["mi300x"]["cost_usd"].get<double>() > 0);
  CHECK(j["machines"]["h100"]["cost_usd"].get<double>() > 0);
  const std::string md = read_all(out + "/report.md");
  CHECK(md.find("| peak VRAM (GiB) |") != std::string::npos);  // memory in GiB everywhere (issue 26)
  CHECK(md.find("| USD per million output tokens, all-in (whole run) |") != std::string::npos);
  CHECK(std::filesystem::exists(out + "/mi300x_throughput/results.json"));
  CHECK(std::filesystem::exists(out + "/h100_throughput/results.json"));
  check_no_secret_anywhere(out);
  check_torn_down(r, out, 2);
}

TEST_CASE("the examples run to completion under --sim too", "[scenario]") {
  for (const char* example : {"hello.lua", "llm_serving.lua"}) {
    const std::string out = temp_dir("example") + "/out";
    const auto r = run_runara({"--sim", "--quiet", "--out", out, std::string(RUNARA_SOURCE_DIR) + "/examples/" + example}, 180);
    INFO(example << r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(std::filesystem::exists(out + "/results.json"));
  }
}

TEST_CASE("runara.mlperf reads the real v4.1 summaries", "[scenario]") {
  const std::string data = std::string(RUNARA_SOURCE_DIR) + "/sim/machine/data/";
  const auto r = run_runara({"--allow-read", data, "-e",
                             "local m = require('runara.mlperf')\n"
                             "for _, f in ipairs{ 'v4.1-amd-8xmi300x-llama2-70b-99-offline', 'v4.1-amd-8xmi300x-llama2-70b-99-server',\n"
                             "  'v4.1-nvidia-dgx-8xh100-llama2-70b-99-offline', 'v4.1-nvidia-dgx-8xh100-llama2-70b-99-server' } do\n"
                             "  local s = m.parse(runara.read_file('" + data + "' .. f .. '-mlperf_log_summary.txt'))\n"
                             "  print(s.scenario, s.valid, s.samples_per_second, s.tokens_per_second, s.latencies_ns['99.00 percentile latency (ns)'] ~= nil)\n"
                             "end\n"
                             "print(pcall(m.parse, 'not a summary'))"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Offline\ttrue\t80.15\t23514.8\ttrue") != std::string::npos);
  CHECK(r.out.find("Server\ttrue\t71.74\t21028.23\ttrue") != std::string::npos);
  CHECK(r.out.find("Offline\ttrue") != std::string::npos);
  CHECK(r.out.find("false\tmlperf.parse: not an mlperf_log_summary.txt") != std::string::npos);
}

#ifdef RUNARA_CHROMIUM
TEST_CASE("report.html renders in headless Chromium with its charts", "[scenario]") {
  const std::string dir = temp_dir("render");
  const std::string out = dir + "/out";
  const auto r = rehearse("llama70b_fp8.lua", out, {}, {{"RUNARA_SIM_TIME_SCALE", "0.25"}});
  REQUIRE(r.exit_code == 0);
  const std::string url = "file://" + out + "/report.html";
  ChildProcess dump({RUNARA_CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url});
  const ChildResult d = dump.wait(60);
  INFO(d.err);
  REQUIRE(d.exit_code == 0);
  // The browser's own DOM, after parsing: the charts and their points are there.
  CHECK(points_of(d.out, "output tok/s") == 3);
  CHECK(points_of(d.out, "TPOT p50") == 3);
  CHECK(points_of(d.out, "VRAM GPU 0") > 3);
  CHECK(d.out.find("class=\"mark\"") != std::string::npos);
  CHECK(d.out.find("<script") == std::string::npos);  // nothing runs in the page, so nothing can fail there
  // The headline cards with cost per million tokens and tokens per joule; the efficiency and manifest tables.
  CHECK(contains(d.out, "<small>USD</small></div><div class=\"l\">per million output tokens, steady-state, at concurrent_32</div>"));
  CHECK(contains(d.out, "<small>USD</small></div><div class=\"l\">per million output tokens, all-in (whole run)</div>"));
  CHECK(contains(d.out, "<small>tok/J</small></div><div class=\"l\">output tokens per joule, at concurrent_32</div>"));
  CHECK(contains(d.out, "<small>GiB</small></div><div class=\"l\">VRAM allocated by vLLM (gpu_memory_utilization=0.9)</div>"));
  CHECK(contains(d.out, "<table id=\"efficiency\">"));
  CHECK(contains(d.out, "<table id=\"manifest\">"));
  const std::string shot = std::string(RUNARA_BINARY_DIR) + "/report-screenshot.png";
  ChildProcess png({RUNARA_CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1280,3400", "--screenshot=" + shot, url});
  const ChildResult p = png.wait(60);
  INFO(p.err);
  CHECK(p.exit_code == 0);
  CHECK(std::filesystem::file_size(shot) > 50000);  // a real picture, not a blank page
}
#endif

#ifdef RUNARA_CHROMIUM
// The comparison of two machines, as a browser shows it: both machines' numbers in the
// comparison table, a series of each machine in every chart, both GPUs, both costs, every load.
TEST_CASE("compare_mi300x_h100's report.html in headless Chromium: both machines everywhere", "[scenario]") {
  const std::string out = temp_dir("render-compare") + "/out";
  const auto r = rehearse("compare_mi300x_h100.lua", out, {}, {{"RUNARA_SIM_TIME_SCALE", "0.25"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string url = "file://" + out + "/report.html";
  ChildProcess dump({RUNARA_CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url});
  const ChildResult d = dump.wait(60);
  INFO(d.err);
  REQUIRE(d.exit_code == 0);
  const std::string& dom = d.out;
  // A table of the page by its id, and the cells of its row that starts with `label`.
  const auto table = [&](const std::string& id) {
    const auto at = dom.find("<table id=\"" + id + "\"");
    return at == std::string::npos ? std::string() : dom.substr(at, dom.find("</table>", at) - at);
  };
  const auto row = [](const std::string& t, const std::string& label) {
    std::vector<std::string> cells;
    const auto at = t.find("<td>" + label + "</td>");
    if (at == std::string::npos) return cells;
    const auto end = t.find("</tr>", at);
    for (auto p = t.find("<td", at); p != std::string::npos && p < end; p = t.find("<td", p + 1)) {
      const auto open = t.find('>', p) + 1;
      cells.push_back(t.substr(open, t.find("</td>", open) - open));
    }
    return cells;
  };
  const auto number = [](const std::string& cell) { return !cell.empty() && cell[0] >= '0' && cell[0] <= '9'; };
  const std::string comparison = table("comparison");
  REQUIRE_FALSE(comparison.empty());
  CHECK(comparison.find("<th>MI300X (simulated)</th><th>H100 (simulated)</th><th>MI300X / H100</th><th>MI300X vs H100</th>") != std::string::npos);
  for (const char* metric : {"single-stream throughput (tok/s)", "TTFT median (ms)", "throughput at 32 concurrent (tok/s)",
                             "peak power (W)", "peak VRAM (GiB)", "machine cost (USD)",
                             "USD per million output tokens, all-in (whole run)", "interactivity at 32 concurrent (tok/s per user)"}) {
    const auto cells = row(comparison, metric);
    INFO(metric);
    REQUIRE(cells.size() == 6);  // metric, MI300X, H100, ratio, MI300X against H100 (runara.comparison), notes
    CHECK(number(cells[1]));
    CHECK(number(cells[2]));
    CHECK(number(cells[3]));
    CHECK(cells[4].find(" %") != std::string::npos);  // "+6.4 %, better", or a difference alone for a figure without a direction
  }
  CHECK(comparison.find("not measured") == std::string::npos);
  // Every chart: a series of each machine, never one line joining both.
  for (const char* series : {"output tok/s", "TTFT p50", "TPOT p99"}) {
    CHECK(points_of(dom, std::string("MI300X ") + series) == 3);  // concurrency 1, 10, 32
    CHECK(points_of(dom, std::string("H100 ") + series) == 3);
    CHECK(points_of(dom, series) == -1);
  }
  CHECK(points_of(dom, "MI300X power GPU 0") > 3);
  CHECK(points_of(dom, "H100 power GPU 0") > 3);
  CHECK(points_of(dom, "MI300X VRAM GPU 0") > 3);
  CHECK(points_of(dom, "H100 VRAM GPU 0") > 3);
  CHECK(points_of(dom, "MI300X running") > 3);  // vLLM's /metrics, scraped on both
  CHECK(points_of(dom, "H100 running") > 3);
  // The GPU summary and the machines' table: a row each, both costs.
  const std::string gpu = table("gpu");
  CHECK(row(gpu, "MI300X").size() == 9);  // machine, GPU, power ×2, energy, energy from, VRAM, util, temp
  CHECK(row(gpu, "H100").size() == 9);
  CHECK(row(gpu, "MI300X")[5] == "counter");           // amd-smi's counter, agreeing with its power
  CHECK(row(gpu, "H100")[5] == "integrated power");    // nvidia-smi has no counter
  const std::string eff = table("efficiency");
  CHECK(row(eff, "MI300X").size() == 10);               // machine, load, 4 costs, tok/s/GPU, interactivity, tok/J, energy from
  const std::string machines = table("machines");
  for (const char* m : {"MI300X", "H100"}) {
    const auto cells = row(machines, m);
    INFO(m);
    REQUIRE(cells.size() == 10);
    CHECK(cells[8].rfind("$0.", 0) == 0);  // its cost
    CHECK(cells[9] == "complete");
  }
  // Every load of both machines, the TTFT loads included.
  const std::string loads = table("loads");
  for (const char* load : {"throughput", "ttft", "concurrent_10", "concurrent_32"}) {
    INFO(load);
    CHECK(loads.find("<td>MI300X</td><td>" + std::string(load) + "</td>") != std::string::npos);
    CHECK(loads.find("<td>H100</td><td>" + std::string(load) + "</td>") != std::string::npos);
  }
  const std::string shot = std::string(RUNARA_BINARY_DIR) + "/report-compare-screenshot.png";
  ChildProcess png({RUNARA_CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1280,5200", "--screenshot=" + shot, url});
  const ChildResult p = png.wait(60);
  INFO(p.err);
  CHECK(p.exit_code == 0);
  CHECK(std::filesystem::file_size(shot) > 50000);
  check_torn_down(r, out, 2);
}
#endif

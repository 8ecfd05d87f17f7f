// scripts/serving_replicas.lua (seed 004: N vLLM replicas behind nginx on one 8-GPU machine)
// rehearsed on the simulated cloud: every replica gets requests through the real nginx, the
// single tensor-parallel server is in the same report, the machine is destroyed; a replica that
// fails to start is named with its log's tail, a bad replica count is refused before anything is
// created. And the vllm shim's GPU visibility against --tensor-parallel-size.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "sim_teardown_checks.hpp"
#include "test_text.hpp"

using namespace runara::test;
using nlohmann::json;

namespace {

const std::string kScript = std::string(RUNARA_SOURCE_DIR) + "/scripts/serving_replicas.lua";

json results(const std::string& out) { return json::parse(read_all(out + "/results.json")); }

// The one machine's ssh log (ssh/NAME.log): every remote command the run sent.
std::string ssh_log(const std::string& out) {
  for (const auto& e : std::filesystem::directory_iterator(out + "/ssh")) return read_all(e.path());
  return "";
}

// The vllm shim started as a replica's container would start it, time not simulated.
ChildResult vllm_shim(const std::string& gpu, std::map<std::string, std::string> env, std::vector<std::string> args) {
  std::vector<std::string> argv{std::string(RUNARA_SOURCE_DIR) + "/sim/machine/bin/vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct"};
  argv.insert(argv.end(), args.begin(), args.end());
  env["RUNARA_SIM_GPU"] = gpu;
  env["RUNARA_SIM_GPU_COUNT"] = "8";
  env["RUNARA_SIM_TIME_SCALE"] = "0";
  env["RUNARA_SIM_STATE"] = temp_dir("vllm-shim");
  ChildProcess p(argv, env);
  return p.wait(30);
}

}  // namespace

TEST_CASE("serving_replicas under --sim: every replica served through nginx, beside one TP=8 server", "[scenario]") {
  // The simulated machine runs the real nginx (./setup installs nginx-light): without it this
  // test fails rather than passing having checked nothing.
  REQUIRE(std::filesystem::exists("/usr/sbin/nginx"));
  const std::string out = temp_dir("replicas") + "/out";
  const auto r = run_sim(kScript, out, {"replicas=2,4", "levels=8,16"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json j = results(out);
  CHECK(j["report"]["status"] == "complete");
  const json& conf = j["benchmarks"]["replicas"]["configurations"];
  REQUIRE(conf.size() == 3);  // 2 x TP4, 4 x TP2, then TP8 direct
  CHECK(j["benchmarks"]["replicas"]["gpus"] == 8);
  for (int i = 0; i < 2; ++i) {
    const json& c = conf[i];
    INFO(c.dump(2));
    const int n = i == 0 ? 2 : 4;
    CHECK(c["replicas"] == n);
    CHECK(c["tensor_parallel_size"] == 8 / n);
    CHECK(c["balancer"] == "nginx round-robin on port 9080");
    REQUIRE(c["request_share"].size() == static_cast<std::size_t>(n));
    double requests = 0;
    for (int k = 0; k < n; ++k) {
      const json& s = c["request_share"][k];
      CHECK(s["port"] == 8001 + k);  // seed 004: ports 8001 … 8000+n
      CHECK(s["requests"].get<double>() > 0);  // every replica got requests through the balancer
      requests += s["requests"].get<double>();
    }
    CHECK(requests == 8 + 16);  // one request per stream at each level, all finished by the replicas
    for (const json& row : c["sweep"]) CHECK(row["failed"] == 0);
  }
  CHECK(conf[0]["request_share"][1]["gpus"] == "4,5,6,7");
  CHECK(conf[1]["request_share"][3]["gpus"] == "6,7");
  CHECK(conf[2]["label"] == "TP8 direct");  // the comparison row
  CHECK(conf[2]["tensor_parallel_size"] == 8);
  CHECK(conf[2]["balancer"] == "none");
  CHECK(conf[2]["sweep"].size() == 2);
  const std::string md = read_all(out + "/report.md");
  CHECK(contains(md, "\n## Replicas behind nginx against one server\n"));
  CHECK(contains(md, "| TP8 direct | 16 |"));
  CHECK(contains(md, "\n## Request share per replica\n"));
  CHECK(contains(md, "| 4 x TP2 | 4 | 8004 | 6,7 |"));
  CHECK(contains(md, "-e HIP_VISIBLE_DEVICES=0,1,2,3 "));  // the manifest's command (replica 1's): AMD's variable
  const std::string html = read_all(out + "/report.html");
  for (const char* series : {"2 x TP4 output tok/s", "4 x TP2 output tok/s", "TP8 direct output tok/s"}) {
    INFO(series);
    CHECK(contains(html, std::string("data-series=\"") + series + "\""));  // a series per configuration
  }
  CHECK(contains(ssh_log(out), "nginx:1.27 nginx -p /runara-lb/"));  // the balancer, started as on the real machine
  CHECK(std::filesystem::exists(out + "/logs/r4/vllm-8004.log"));
  check_torn_down(r, out);
}

TEST_CASE("serving_replicas under --sim: a replica that fails to start is named, the run partial, the machine destroyed",
          "[scenario]") {
  const std::string out = temp_dir("replicas-fail") + "/out";
  const auto r = run_sim(kScript, out, {"replicas=2", "levels=8"}, {{"RUNARA_SIM_FAULTS", "vllm_crash@8002"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "replicas.start: replica 2 of 2 (port 8002, GPUs 4,5,6,7) failed: the server on "));
  CHECK(contains(r.err, "HIP out of memory"));  // its log's tail
  CHECK(results(out)["report"]["status"] == "partial");
  // The replica that did start was stopped before the error went on.
  CHECK(contains(ssh_log(out), "docker rm -f runara-vllm-"));
  check_torn_down(r, out);
}

TEST_CASE("serving_replicas: a replica count the GPUs cannot split is refused before anything is created", "[scenario]") {
  const std::string out = temp_dir("replicas-bad") + "/out";
  const auto r = run_sim(kScript, out, {"replicas=2,3"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);  // the param's fault: a usage error, without a traceback
  CHECK_FALSE(contains(r.err, "stack traceback"));
  CHECK(contains(r.err, "param replicas=2,3: 3 replicas do not divide the machine's 8 GPUs evenly"));
  CHECK(contains(r.err, "choose count 1, 2, 4, 8"));
  CHECK_FALSE(contains(r.err, "creating droplet"));  // nothing was created, so nothing is left
  CHECK_FALSE(std::filesystem::exists(out));           // nor a folder of a run that never began
}

TEST_CASE("the vllm shim honours the GPU visibility variable against --tensor-parallel-size", "[scenario]") {
  // More TP ranks than visible GPUs: vLLM's own error (vllm/executor/ray_utils.py).
  auto r = vllm_shim("h100", {{"CUDA_VISIBLE_DEVICES", "0,1"}}, {"--tensor-parallel-size", "4", "--port", "8003"});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group."));
  CHECK(contains(r.err, "--tensor-parallel-size 4, 2 GPU(s) visible: 0,1"));
  // AMD reads HIP_VISIBLE_DEVICES first, and CUDA's on NVIDIA only.
  r = vllm_shim("mi300x", {{"HIP_VISIBLE_DEVICES", "6"}, {"CUDA_VISIBLE_DEVICES", "0,1,2,3"}}, {"-tp", "2"});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "1 GPU(s) visible: 6"));
  r = vllm_shim("h100", {{"HIP_VISIBLE_DEVICES", "0"}, {"CUDA_VISIBLE_DEVICES", "9"}}, {});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "RuntimeError: No CUDA GPUs are available"));
}

// scripts/serving_multinode.lua and scripts/training.lua nodes=2 rehearsed on the simulated cloud:
// several droplets in one VPC behind the run's firewall, Ray joined across them on their private
// addresses, one vLLM server over both nodes (tensor parallel x pipeline parallel), the suite and
// the sweep against it, every node's GPUs sampled, and every droplet, the firewall and the VPC
// deleted at the end; a node that never joins, a firewall that blocks Ray's port, a budget that
// cannot cover the nodes: each a clear error with everything the run made deleted.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "eventually.hpp"
#include "sim/fake_digitalocean.hpp"
#include "sim_teardown_checks.hpp"
#include "test_text.hpp"

using namespace runara::test;
using nlohmann::json;

namespace {

const std::string kServing = std::string(RUNARA_SOURCE_DIR) + "/scripts/serving_multinode.lua";
const std::string kTraining = std::string(RUNARA_SOURCE_DIR) + "/scripts/training.lua";
const std::string kBadNetwork = std::string(RUNARA_SOURCE_DIR) + "/tests/scripts/cluster_bad_network.lua";

json results(const std::string& out) { return json::parse(read_all(out + "/results.json")); }

// Every ssh log of the run (ssh/NAME.log), one after the other: the commands each node was sent.
std::string ssh_logs(const std::string& out) {
  std::string all;
  for (const auto& e : std::filesystem::directory_iterator(out + "/ssh")) all += read_all(e.path());
  return all;
}

// The droplets, then the run's firewall, then its VPC: each deleted, in that order.
void check_cluster_torn_down(const ChildResult& r, const std::string& out, int droplets) {
  check_torn_down(r, out, droplets + 2);  // each droplet, the firewall and the VPC: "… is gone"
  const auto fw = r.err.find("-fw is gone");
  const auto vpc = r.err.find("-vpc is gone");
  INFO(r.err);
  REQUIRE(fw != std::string::npos);
  REQUIRE(vpc != std::string::npos);
  std::size_t droplets_gone = 0;
  for (auto at = r.err.find("is gone"); at != std::string::npos && at < fw; at = r.err.find("is gone", at + 1)) ++droplets_gone;
  CHECK(droplets_gone == static_cast<std::size_t>(droplets));  // every droplet went first
  CHECK(fw < vpc);                                              // then the firewall, then the VPC
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("serving_multinode under --sim: one server over two nodes on Ray, the suite and the sweep, both nodes' GPUs",
          "[scenario]") {
  const std::string out = temp_dir("multinode") + "/out";
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_sim(kServing, out, {"levels=4,8"});
  WARN("serving_multinode under --sim: " << seconds_since(t0) << " s");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json j = results(out);
  CHECK(j["report"]["status"] == "complete");
  const json& mn = j["benchmarks"]["multinode"];
  INFO(mn.dump(2));
  CHECK(mn["nodes"] == 2);
  CHECK(mn["gpus"] == 16);
  CHECK(mn["tensor_parallel_size"] == 8);
  CHECK(mn["pipeline_parallel_size"] == 2);
  CHECK(mn["vpc"]["owned"] == true);
  REQUIRE(mn["nodes_detail"].size() == 2);
  const std::string head_ip = mn["nodes_detail"][0]["private_ip"];
  CHECK(head_ip != mn["nodes_detail"][1]["private_ip"]);
  REQUIRE(mn["gpu_per_node"].size() == 2);
  for (const json& g : mn["gpu_per_node"]) {
    CHECK(g["gpus"] == 8);
    CHECK(g["mean_power_w"].get<double>() > 0);  // each node's own sampler saw its GPUs work
  }
  const std::string logs = ssh_logs(out);
  CHECK(contains(logs, "--network=host"));
  CHECK(contains(logs, "start --block --head --port=6379"));
  CHECK(contains(logs, "start --block --address=" + head_ip + ":6379"));  // the worker joins on the head's private address
  CHECK(contains(logs, "-e VLLM_HOST_IP=" + head_ip));
  CHECK(contains(logs, "--pipeline-parallel-size '2' --distributed-executor-backend 'ray'"));
  const std::string md = read_all(out + "/report.md");
  CHECK(contains(md, "\n## GPUs per node\n"));
  CHECK(std::filesystem::exists(out + "/logs/ray-node-2.log"));
  CHECK(std::filesystem::exists(out + "/logs/vllm.log"));
  check_cluster_torn_down(r, out, 2);
}

TEST_CASE("runara.cluster under --sim: a node that never joins Ray is a clear error, the report failed, everything deleted",
          "[scenario]") {
  // The worker keeps trying the head's GCS port (closed by the firewall the script put in place)
  // for 60 s, longer than c:start_ray waits: the timeout names what ray status shows and the node.
  const std::string out = temp_dir("multinode-nojoin") + "/out";
  const auto r = run_sim(kBadNetwork, out, {"mode=firewall", "timeout=3"}, {{"RUNARA_SIM_JOIN_TIMEOUT_S", "60"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "c:start_ray: the Ray cluster was not ready after 3 s: `ray status` on node 1 of 2 (droplet "));
  CHECK(contains(r.err, "shows 1 of 2 node(s) and 8 of 16 GPU(s) joined (want 2 nodes, 16 GPUs)"));
  CHECK(contains(r.err, "-- node 2 of 2 (droplet "));                  // the node that never joined, named
  CHECK(contains(r.err, "Failed to connect to GCS at address 10."));  // its own last lines
  const json j = results(out);
  CHECK(j["report"]["status"] == "partial");
  check_cluster_torn_down(r, out, 2);
}

TEST_CASE("serving_multinode under --sim: a worker node that dies mid-run fails the run with what the cluster shows",
          "[scenario]") {
  const std::string out = temp_dir("multinode-dies") + "/out";
  const auto r = run_sim(kServing, out, {"levels=4,8"}, {{"RUNARA_SIM_FAULTS", "ray_worker_dies@3"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "vLLM on node 1 of 2 (droplet "));
  CHECK(contains(r.err, "The actor is dead because its node has died."));  // vLLM's own last lines
  CHECK(contains(r.err, "`ray status` now: 1 of 2 node(s) and 8 of 16 GPU(s) joined; recent failures: node_"));
  CHECK(contains(r.err, "Ray on node 2 of 2 (droplet "));
  CHECK(contains(r.err, ") has stopped (its machine does not answer)"));
  CHECK(results(out)["report"]["status"] == "partial");
  CHECK(std::filesystem::exists(out + "/logs/vllm.log"));
  check_cluster_torn_down(r, out, 2);
}

TEST_CASE("serving_multinode: a budget that cannot cover the nodes is refused before anything is created", "[scenario]") {
  const std::string out = temp_dir("multinode-budget") + "/out";
  const auto r = run_sim(kServing, out, {}, {}, {"--budget", "10"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "cluster.create: 2 x gpu-mi300x8-1536gb do not fit: "));
  CHECK(contains(r.err, "> budget $10.00"));
  CHECK_FALSE(contains(r.err, "creating droplet"));
  CHECK_FALSE(contains(r.err, "vpc runara-"));  // not even the VPC
  // runara plan refuses it the same way: its rehearsal runs under a short deadline of its own, but
  // the budget checks count the real run's: the full profile's (a plan rehearses the real run),
  // whose deadline is --max-runtime's 2 h.
  const auto plan = run_runara({"plan", "--budget", "10", kServing}, 120);
  INFO(plan.out << plan.err);
  CHECK(contains(plan.out, "cluster.create: 2 x gpu-mi300x8-1536gb do not fit: "));
  CHECK(contains(plan.out, "for the 2.00 h left before the run's deadline"));
  CHECK(contains(plan.out, "It creates no machine."));
  CHECK(plan.exit_code == 1);
  // Within the budget, plan lists both nodes and their worst case.
  const auto fits = run_runara({"plan", "--budget", "100", kServing}, 120);
  INFO(fits.out << fits.err);
  CHECK(contains(fits.out, "It creates 2 machines (at most 2 at once):"));
  CHECK(contains(fits.out, "Worst case: $63.68 (every machine alive until the 2.0 h deadline"));
}

TEST_CASE("serving_multinode: nodes > 1 on a size that is not 8 GPUs, or a size the region lacks, is refused before anything is created", "[scenario]") {
  const std::string out = temp_dir("multinode-size") + "/out";
  const auto r = run_sim(kServing, out, {"size=gpu-mi300x1-192gb"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "multi-node GPU droplets come only in multiples of 8 GPUs, and gpu-mi300x1-192gb has 1 GPU"));
  CHECK_FALSE(contains(r.err, "creating droplet"));
  // The other vendor's size in a region that does not offer it: refused before the VPC too.
  const auto h = run_sim(kServing, temp_dir("multinode-region") + "/out", {"size=gpu-h100x8-640gb", "region=atl1"});
  INFO(h.out << h.err);
  CHECK(h.exit_code == 1);
  CHECK(contains(h.err, "cluster.create: size 'gpu-h100x8-640gb' is not offered in region 'atl1' (it is in: nyc2, tor1)"));
  CHECK_FALSE(contains(h.err, "creating vpc"));
  CHECK_FALSE(contains(h.err, "creating droplet"));
}

TEST_CASE("training nodes=2 under --sim: DDP across both nodes with torchrun's rendezvous on the head", "[scenario]") {
  const std::string out = temp_dir("training-2nodes") + "/out";
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_sim(kTraining, out, {"size=gpu-mi300x8-1536gb", "parts=ddp", "gpus=8", "nodes=2", "quick=true"}, {},
                         {"--budget", "100"});
  WARN("training nodes=2 under --sim: " << seconds_since(t0) << " s");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string logs = ssh_logs(out);
  CHECK(count_of(logs, "--rdzv-backend=c10d") >= 2);  // torchrun on every node
  CHECK(contains(logs, "--nnodes=2 --node-rank=1 --nproc-per-node=8"));
  const json j = results(out);
  bool sixteen = false;
  for (const json& p : j["benchmarks"]["training"]["scaling"]["7b"]) {
    sixteen = sixteen || (p["gpus"] == 16 && p["tokens_per_s"].get<double>() > 0);
  }
  CHECK(sixteen);  // a scaling point over both nodes' GPUs, from rank 0 on the head
  CHECK(contains(read_all(out + "/train_bench.jsonl"), "\"nnodes\": 2"));
  CHECK(contains(read_all(out + "/report.md"), "\n## GPUs of the other nodes\n"));
  check_cluster_torn_down(r, out, 2);
}

TEST_CASE("runara.cluster under --sim: a firewall that keeps Ray's port closed fails the join clearly, everything deleted",
          "[scenario]") {
  const std::string out = temp_dir("multinode-firewall") + "/out";
  const auto r = run_sim(kBadNetwork, out, {"mode=firewall"}, {{"RUNARA_SIM_JOIN_TIMEOUT_S", "3"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "c:start_ray: Ray on node 2 of 2 (droplet "));
  CHECK(contains(r.err, "exited before the cluster was ready (a worker that cannot reach the head's 10."));
  CHECK(contains(r.err, "check that the run's firewall opens Ray's ports between the machines); its last lines:"));
  CHECK(contains(r.err, "Unable to connect to GCS (ray head) at 10."));  // Ray's own words, the head's private address
  CHECK(contains(r.err, "does not let TCP 6379 in"));                     // the simulated fabric says which port
  CHECK(results(out)["report"]["status"] == "partial");
  check_cluster_torn_down(r, out, 2);
}

TEST_CASE("runara.cluster: an account without multi-node GPU droplets is told so, and the run's VPC is deleted",
          "[scenario]") {
  runara::sim::FakeDoConfig config;
  config.token = "cluster-test-token-5e1";
  config.active_after_s = 0.1;
  config.delete_after_s = 0.1;
  config.enforce_rate_limits = false;
  config.multi_node_gpus = false;
  runara::sim::FakeDigitalOcean fake(config);
  fake.start();
  const std::string dir = temp_dir("multinode-account");
  const auto r = run_runara({"--budget", "100", "--out", dir + "/out", kBadNetwork, "mode=account"}, 90,
                            {{"RUNARA_DO_API_URL", fake.base_url()}, {"DIGITALOCEAN_TOKEN", config.token},
                             {"DIGITALOCEAN_ACCESS_TOKEN", ""}, {"XDG_CONFIG_HOME", ""}, {"RUNARA_STATE_DIR", dir + "/state"},
                             {"RUNARA_POLL_S", "0.1"}, {"HOME", dir}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "cluster.create: node "));
  CHECK(contains(r.err, "multi-node GPU droplets must be enabled on the account"));
  CHECK(fake.creates() == 0);
  CHECK(contains(r.err, "vpc runara-"));  // the run's VPC was made first, then deleted
  const auto run_vpcs = [&] {
    int n = 0;
    for (const auto& v : fake.vpcs()) n += v.value("name", "").rfind("runara-", 0) == 0 ? 1 : 0;
    return n;
  };
  CHECK(eventually([&] { return run_vpcs() == 0 && fake.keys().empty(); }, 20));
}

// The simulated VPC fabric (sim/sim_fabric.hpp) under `runara --sim`, end to end: two simulated
// 8-GPU droplets of one VPC form a Ray cluster by private address through the vendor container
// (tests/scripts/sim_vpc_cluster.lua), multi-node vLLM answers only once both joined and fails with
// vLLM's placement-group error when the worker never does, torchrun rendezvouses across them, a
// worker that dies takes vLLM down as a lost Ray actor does, and droplets of two VPCs never meet.
// The run's own VPC and firewall (droplet.vpc, droplet.firewall) close and open Ray's port; the
// firewall's effect is also checked on the shims directly, with fabric files of the test's own
// (their making from the fake API's firewalls: unit/test_sim_fabric.cpp).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "sim_teardown_checks.hpp"
#include "test_text.hpp"

using namespace runara::test;

namespace {

const std::string kScript = std::string(RUNARA_SOURCE_DIR) + "/tests/scripts/sim_vpc_cluster.lua";
const std::string kShims = std::string(RUNARA_SOURCE_DIR) + "/sim/machine";

ChildResult cluster(const std::string& out, std::vector<std::string> params, std::map<std::string, std::string> env = {}) {
  env["RUNARA_SIM_TIME_SCALE"] = "0.05";
  env.emplace("RUNARA_SIM_JOIN_TIMEOUT_S", "2");
  return run_sim(kScript, out, params, env, {"--budget", "200"});
}

// The block the script printed as "TAG out=…" (up to "TAG err=") or "TAG err=…" (up to the line of
// the next "TAG2 code=").
std::string block(const std::string& printed, const std::string& tag, const std::string& stream) {
  const std::string text = "\n" + printed, key = "\n" + tag + " " + stream + "=";
  auto at = text.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  auto end = std::string::npos;
  if (stream == "out") {
    end = text.find("\n" + tag + " err=", at);
  } else if ((end = text.find(" code=", at)) != std::string::npos) {
    end = text.rfind('\n', end);
  }
  return text.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// A simulated machine's environment for running a shim here, beside a fabric folder of the test's.
struct Machine {
  std::map<std::string, std::string> env;
  Machine(const std::string& root, const std::string& name, const std::string& private_ip) {
    const std::string state = root + "/" + name;
    std::filesystem::create_directories(state);
    env = {{"RUNARA_SIM_STATE", state},           {"RUNARA_SIM_GPU", "h100"},
           {"RUNARA_SIM_GPU_COUNT", "8"},         {"RUNARA_SIM_FABRIC", root + "/fabric"},
           {"RUNARA_SIM_PRIVATE_IP", private_ip}, {"RUNARA_SIM_IP", "127.0.9." + private_ip.substr(private_ip.rfind('.') + 1)},
           {"RUNARA_SIM_TIME_SCALE", "0.05"},     {"RUNARA_SIM_JOIN_TIMEOUT_S", "1"},
           {"RUNARA_SIM_SIZE", "gpu-h100x8-640gb"}};
  }
  ChildResult run(std::vector<std::string> argv) const {
    ChildProcess p(argv, env);
    return p.wait(30);
  }
  ChildResult ray(std::vector<std::string> args) const {
    args.insert(args.begin(), kShims + "/bin/ray");
    return run(args);
  }
};

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

}  // namespace

TEST_CASE("sim VPC: a Ray head and worker join by private address, multi-node vLLM answers only once both did",
          "[sim_vpc]") {
  const std::string out = temp_dir("sim-vpc") + "/out";
  const auto r = cluster(out, {});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "head_ip=10.116.16.2 work_ip=10.116.16.3"));  // the region's default VPC
  // A head that is not there: Ray's own texts after the GCS timeout, exit 1.
  CHECK(contains(r.out, "wrong code=1"));
  const std::string wrong = block(r.out, "wrong", "err");
  CHECK(contains(wrong, "gcs_rpc_client.h:151: Failed to connect to GCS at address 10.116.16.250:6379 within 5 seconds."));
  CHECK(contains(wrong, "Unable to connect to GCS (ray head) at 10.116.16.250:6379. Check that (1) Ray with matching "
                        "version started successfully at the specified address, (2) this node can reach the specified "
                        "address, and (3) there is no firewall setting preventing access."));
  CHECK(contains(block(r.out, "wrong", "out"), "Local node IP: 10.116.16.3"));  // the interface towards the head
  // vLLM before the worker joined: it waits for the placement group, then vLLM's ValueError.
  CHECK(contains(r.out, "lonely code=1"));
  const std::string lonely = block(r.out, "lonely", "out");
  CHECK(contains(lonely, "Connecting to existing Ray cluster at address: 10.116.16.2:6379..."));
  CHECK(contains(lonely, "The number of required GPUs exceeds the total number of available GPUs in the placement group."));
  CHECK(contains(lonely, "ValueError: Cannot provide a placement group of placement_group_specs=[{'node:10.116.16.2': 0.001, 'GPU': 1.0}, {'GPU': 1.0}"));
  CHECK(contains(lonely, "within 1800 seconds. See `ray status` to make sure the cluster has enough resources."));
  CHECK_FALSE(contains(lonely, "Uvicorn running"));
  // Both nodes in `ray status`, from the head's container and from the worker.
  for (const char* tag : {"status", "worker_status"}) {
    INFO(tag);
    const std::string st = block(r.out, tag, "out");
    CHECK(count_of(st, "\n 1 node_") == 2);
    CHECK(contains(st, "\nActive:\n"));
    CHECK(contains(st, "\n 0.0/16.0 GPU\n"));
    CHECK(contains(st, "\n 0.0/320.0 CPU\n"));
  }
  CHECK(contains(r.out, "healthy=true"));
  CHECK(contains(block(r.out, "completion", "out"), "\"object\":\"text_completion\""));
  CHECK(contains(block(r.out, "serving_status", "out"), "\n 16.0/16.0 GPU\n"));  // the placement group holds them
  // A fabric for the shims, not IP routing: curl from the worker finds no route to the head.
  CHECK(contains(r.out, "curl_peer code=7"));
  check_torn_down(r, out, 2);
}

TEST_CASE("sim VPC: a worker node that dies mid-sweep leaves the Ray cluster and vLLM on the head exits",
          "[sim_vpc]") {
  const std::string out = temp_dir("sim-vpc-fault") + "/out";
  const auto r = cluster(out, {"mode=fault", "fault_wait=2"}, {{"RUNARA_SIM_FAULTS", "ray_worker_dies@5"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "healthy=true"));                 // served first (5 s x 0.05 later the node dies)
  CHECK(contains(r.out, "after_fault out=000"));          // then nothing answers on the head
  const std::string log = block(r.out, "vllm_log", "out");
  CHECK(contains(log, "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task."));
  CHECK(contains(log, "\tip: 10.116.16.3\n"));
  CHECK(contains(log, "AsyncLLMEngine has failed, terminating server process"));
  const std::string st = block(r.out, "fault_status", "out");
  CHECK(count_of(st, "\n 1 node_") == 1);
  CHECK(contains(st, ": RayletUnexpectedlyDied (ip: 10.116.16.3)"));
  CHECK(contains(st, "\n 0.0/8.0 GPU\n"));
  check_torn_down(r, out, 2);
}

TEST_CASE("sim VPC: torchrun's c10d rendezvous across two nodes, and its errors when a node or the store is missing",
          "[sim_vpc]") {
  const std::string out = temp_dir("sim-vpc-torchrun") + "/out";
  const auto r = cluster(out, {"mode=torchrun"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "rank0 code=0"));
  const std::string rank0 = block(r.out, "rank0", "out");
  CHECK(contains(rank0, "\"world_size\": 16"));
  CHECK(contains(rank0, "\"part\": \"ddp\", \"size\": \"small\""));
  CHECK(contains(rank0, "\"nnodes\": 2, \"tokens_per_s_per_node\": "));
  CHECK(contains(block(r.out, "rank0", "err"), "Rendezvous complete for workers."));
  // Only global rank 0 prints results; the other node joined all the same.
  const std::string rank1 = block(r.out, "rank1", "out");
  CHECK(contains(rank1, "group_world_size=2"));
  CHECK_FALSE(contains(rank1, "\"part\""));
  CHECK(contains(r.out, "alone code=1"));
  CHECK(contains(block(r.out, "alone", "err"), "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"));
  CHECK(contains(r.out, "nohost code=1"));
  CHECK(contains(block(r.out, "nohost", "err"),
                 "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed."));
  check_torn_down(r, out, 2);
}

TEST_CASE("sim VPC: droplets of two VPCs cannot rendezvous", "[sim_vpc]") {
  const std::string out = temp_dir("sim-vpc-two") + "/out";
  const auto r = cluster(out, {"mode=two_vpcs", "region2=tor1"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "head_ip=10.116.16.2 work_ip=10.116."));
  CHECK_FALSE(contains(r.out, "work_ip=10.116.16."));  // tor1's default VPC, another range
  CHECK(contains(r.out, "join code=1"));
  const std::string err = block(r.out, "join", "err");
  CHECK(contains(err, "Unable to connect to GCS (ray head) at 10.116.16.2:6379."));
  CHECK(contains(err, "is not an address in this machine's VPC"));
  check_torn_down(r, out, 2);
}

TEST_CASE("sim VPC: the run's VPC and firewall (droplet.vpc, droplet.firewall): Ray's port closed, then opened",
          "[sim_vpc]") {
  const std::string out = temp_dir("sim-vpc-fw-run") + "/out";
  const auto r = cluster(out, {"mode=firewall"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // The firewall names 8265 and 29500-29510 but not 6379: the worker fails as Ray does.
  CHECK(contains(r.out, "closed code=1"));
  const std::string closed = block(r.out, "closed", "err");
  CHECK(contains(closed, "Unable to connect to GCS (ray head) at "));
  CHECK(contains(closed, "does not let TCP 6379 in from "));
  // droplet.firewall again, with 6379: the same command joins.
  const std::string opened = block(r.out, "opened", "out");
  CHECK(count_of(opened, "\n 1 node_") == 2);
  CHECK(contains(opened, "\n 0.0/16.0 GPU\n"));
  // A droplet of the same region outside the run's VPC never reaches the head.
  CHECK(contains(r.out, "outsider code=1"));
  CHECK(contains(block(r.out, "outsider", "err"), "is not an address in this machine's VPC"));
  CHECK(contains(r.err, "firewall runara-"));
  CHECK(contains(r.err, "vpc runara-"));
  check_torn_down(r, out, 5);  // "is gone": 3 droplets, the firewall, the VPC
}

TEST_CASE("sim VPC shims: a port the cloud firewall does not open fails as the real tool does", "[sim_vpc]") {
  const std::string root = temp_dir("sim-vpc-fw");
  std::filesystem::create_directories(root + "/fabric/firewall");
  std::filesystem::create_directories(root + "/fabric/listen");
  write(root + "/fabric/firewall/10.9.0.2", "open\n");
  write(root + "/fabric/firewall/10.9.0.3", "open\n");
  const Machine head(root, "head", "10.9.0.2"), work(root, "work", "10.9.0.3");
  auto r = head.ray({"start", "--head", "--port=6379", "--node-ip-address=10.9.0.2", "--num-gpus=8"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "Ray runtime started."));
  CHECK(contains(r.out, "ray start --address='10.9.0.2:6379'"));
  // The head's firewall opens 22 and 8265 to the worker, not 6379: the join fails after the timeout.
  write(root + "/fabric/firewall/10.9.0.2", "# runara simulated VPC fabric\ntcp 22 22 10.9.0.3\ntcp 8265 8265 10.9.0.3\n");
  r = work.ray({"start", "--address=10.9.0.2:6379", "--num-gpus=8"});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "Unable to connect to GCS (ray head) at 10.9.0.2:6379."));
  CHECK(contains(r.err, "the cloud firewall of 10.9.0.2 does not let TCP 6379 in from 10.9.0.3"));
  // torchrun's store (the head's, waiting 5 s for the other node) behind a firewall without 29500.
  r = head.run({kShims + "/bin/docker", "run", "-d", "--name", "rank0", "--gpus", "all", "-e", "RUNARA_SIM_JOIN_TIMEOUT_S=5",
                "nvcr.io/nvidia/pytorch:24.10-py3", "torchrun", "--nnodes=2", "--nproc-per-node=8", "--rdzv-backend=c10d",
                "--rdzv-endpoint=10.9.0.2:29500", "/workspace/train_bench.py", "--parts", "ddp"});
  REQUIRE(r.exit_code == 0);
  r = work.run({kShims + "/bin/docker", "run", "--rm", "--gpus", "all", "nvcr.io/nvidia/pytorch:24.10-py3", "torchrun",
                "--nnodes=2", "--nproc-per-node=8", "--rdzv-backend=c10d", "--rdzv-endpoint=10.9.0.2:29500",
                "/workspace/train_bench.py", "--parts", "ddp"});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "RendezvousConnectionError: The connection to the C10d store has failed."));
  CHECK(contains(r.err, "the cloud firewall of 10.9.0.2 does not let TCP 29500 in from 10.9.0.3"));
  // Opened to the worker (as droplet.firewall's ports from the run's tag would): it joins.
  write(root + "/fabric/firewall/10.9.0.2", "tcp 6379 6379 10.9.0.3\n");
  r = work.ray({"start", "--address=10.9.0.2:6379", "--num-gpus=8"});
  CHECK(r.exit_code == 0);
  r = head.ray({"status"});
  CHECK(count_of(r.out, "\n 1 node_") == 2);
  CHECK(contains(r.out, "\n 0.0/16.0 GPU\n"));
  CHECK(contains(head.ray({"status", "-v"}).out, "\nNode: "));  // per node, as `ray status -v`
  // Without a cluster: Ray's own words.
  CHECK(work.ray({"stop"}).out == "Stopped all 5 Ray processes.\n");
  CHECK(head.ray({"stop"}).out == "Stopped all 9 Ray processes.\n");
  CHECK(head.ray({"stop"}).out == "Did not find any active Ray processes.\n");
  r = head.ray({"status"});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "ConnectionError: Could not find any running Ray instance."));
  r = head.ray({"start", "--head", "--bogus"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "Error: No such option: --bogus"));
}

TEST_CASE("sim VPC: a machine's commands cannot write, swap or remove runara's firewall files", "[sim_vpc][sandbox]") {
  const std::string out = temp_dir("sim-vpc-tamper") + "/out";
  const auto r = cluster(out, {"mode=tamper"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* tag : {"write code=", "swap code=", "remove code="}) {
    CHECK(contains(r.out, tag));
    CHECK_FALSE(contains(r.out, std::string(tag) + "0\n"));
  }
  CHECK(contains(block(r.out, "write", "err"), "Read-only file system"));
  CHECK(contains(r.out, "listen out=ok"));  // the shims' own part of the fabric stays theirs
  // runara's rewrite after droplet.firewall went to the real folder: the head's file for the worker
  // lets 6379 through from the head, and nothing was written through a link into /tmp.
  CHECK(contains(block(r.out, "after", "out"), "tcp 6379 6379 "));
  check_torn_down(r, out, 4);  // 2 droplets, the firewall, the VPC
}

// CI saw torchrun's head fail at once with "address already in use" while its worker waited for
// it: the worker's reachability probe held the head's fresh listener lock for the milliseconds it
// took, just as the head took it. Three peers probe one address every 20 ms (the shims: every
// 200 ms) while it is listened on 200 times (13 to 23 of 200 listens failed so before the fix,
// here); a second listener is still refused, and a listener's lock is seen held until it ends.
TEST_CASE("sim VPC: peers probing an address never make its listener fail, a second listener still does",
          "[sim_vpc]") {
  const std::string root = temp_dir("sim-vpc-probe");
  const Machine head(root, "head", "10.116.16.2");
  std::filesystem::create_directories(root + "/fabric/listen");
  const std::string script = ". " + kShims + R"(/lib/fabric.sh
lock=$RUNARA_SIM_FABRIC/listen/10.116.16.2:29500 stop=$RUNARA_SIM_STATE/stop
for p in 1 2 3; do ( until [ -e "$stop" ]; do held "$lock"; sleep 0.02; done ) & done
failed=0
for i in $(seq 1 200); do
  rm -f "$lock"
  ( listen_on 10.116.16.2 29500 ) || failed=$((failed + 1))
done
touch "$stop"; wait
echo "failed=$failed"
listen_on 10.116.16.2 29500 && echo first=listening
held "$lock" && echo held=yes
( listen_on 10.116.16.2 29500 ); echo second=$?
exec 9>&-
held "$lock" || echo released=yes
)";
  const auto r = head.run({"/bin/bash", "-c", script});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "failed=0\n"));
  CHECK(contains(r.out, "first=listening\nheld=yes\nsecond=1\nreleased=yes\n"));
}

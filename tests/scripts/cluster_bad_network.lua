-- runara.cluster (through a scenario's sc:cluster, so a report is written) against what a run
-- can meet on the cloud, for tests/end_to_end/test_scenarios_multinode_sim.cpp. Params:
--   mode     firewall (default): two nodes under --sim whose firewall the script then replaces
--            with one that keeps Ray's ports closed, so the worker never reaches the head's GCS
--            port and never joins; account: two 8-GPU nodes on an account without multi-node
--            GPU droplets.
--   timeout  seconds c:start_ray waits for every node (default 60)
local scenario = require("runara.scenario")

scenario.run({
  title = "runara.cluster on a bad network",
  needs_machine = true,
  params = {
    { name = "mode", default = "firewall", choices = { "firewall", "account" }, help = "what goes wrong" },
    { name = "timeout", type = "number", default = 60, min = 1, help = "seconds for every node to join Ray" },
  },
}, function(sc)
  watchdog.limit(600)  -- two 8-GPU droplets for 10 minutes fit the default budget
  if sc.params.mode == "account" then
    sc:cluster{ nodes = 2, size = "gpu-mi300x8-1536gb", image = "gpu-amd-base", region = "atl1" }
    return
  end
  local c = sc:cluster{ nodes = 2, size = "gpu-h100x8-640gb", image = "gpu-h100x8-base", region = "nyc2" }
  -- A second droplet.firewall replaces the run's rules: only vLLM's port, Ray's closed.
  droplet.firewall{ ports = { 8000 }, sources = { c.controller } }
  c:start_ray{ timeout = sc.params.timeout }
end)

-- A script that branches on runara.simulated: under --sim (a rehearsal the user asked for) it
-- creates a small droplet, for real a large one. `runara plan` must show the real branch (the
-- large one): a plan cannot be told from the real run (issue 37, item 6).
if runara.simulated then
  print("branch: rehearsal")
  droplet.create { name = "small", size = "gpu-mi300x1-192gb", image = "gpu-amd-base", region = "atl1" }
else
  print("branch: real")
  droplet.create { name = "large", size = "gpu-mi300x8-1536gb", image = "gpu-amd-base", region = "atl1" }
end

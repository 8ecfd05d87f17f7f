-- The scenario of the private-network teardown tests: a VPC (the run's own, or an existing one
-- with existing=NAME), the run's firewall, and N droplets in the VPC, then the ending the test
-- asks for (params: n=, ending=normal|error|task_error|busy|wait, existing=, region=).
local n = tonumber(runara.params.n or "2")
local ending = runara.params.ending or "normal"
local region = runara.params.region or "nyc3"

local vpc = droplet.vpc{ region = region, existing = runara.params.existing }
print("VPC " .. vpc.name .. " " .. vpc.id .. " " .. vpc.ip_range .. " owned=" .. tostring(vpc.owned))
local fw = droplet.firewall{ ports = { 6379, "29500-29510" }, sources = { "203.0.113.7" } }
print("FIREWALL " .. fw.name .. " " .. fw.id)

local tasks = {}
for i = 1, n do
  tasks[i] = runara.spawn(droplet.create, { name = "n" .. i, size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64",
                                            region = region, vpc = vpc })
end
for i = 1, n do
  local d = tasks[i]:join()
  print("ACTIVE " .. d.name .. " private " .. tostring(d.private_ip))
end
print("ALL ACTIVE")

if ending == "error" then
  error("the scenario failed on purpose")
elseif ending == "task_error" then
  runara.spawn(function() error("a task failed on purpose") end)
  runara.sleep(0.1)
elseif ending == "busy" then
  while true do end
elseif ending == "wait" then
  runara.sleep(600)
end

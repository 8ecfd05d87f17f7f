-- The scenario of the teardown tests: create N droplets in parallel, then end in the way the
-- test asks (params: n=, ending=normal|error|task_error|busy|wait).
local n = tonumber(runara.params.n or "1")
local ending = runara.params.ending or "normal"
local size = runara.params.size or "s-1vcpu-1gb"

if runara.params.delay then
  print("delaying")
  runara.sleep(tonumber(runara.params.delay))
end

local tasks = {}
for i = 1, n do
  tasks[i] = runara.spawn(droplet.create, { name = "t" .. i, size = size, image = "ubuntu-22-04-x64", region = "nyc3" })
end
for i = 1, n do
  local d = tasks[i]:join()
  runara.log("ACTIVE " .. d.name .. " " .. d.ip)
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

-- The scenario of the droplet failure tests (tests/end_to_end/test_droplet_failures.cpp): create
-- droplets, report each one, then end as the test asks.
--   n=N            how many droplets (default 1), created one after another
--   spawn=1        create them all at once, each in its own task
--   size=, image=, region=, name=   the create options (default a small droplet in nyc3)
--   tolerate=1     a failed create is reported ("CREATE FAILED: ...") and the script carries on
--   ready=SECONDS  fetch the size catalogue first, then before each create print "READY i" and
--                  wait this long (the test injects a fault into the POST meanwhile)
--   sleep=SECONDS  wait this long once all are created
--   ending=error   end with an error instead of normally
local p = runara.params
print("RUN " .. runara.run_id)
local n = tonumber(p.n or "1")
local options = {
  name = p.name,
  size = p.size or "s-1vcpu-1gb",
  image = p.image or "ubuntu-22-04-x64",
  region = p.region or "nyc3",
}

local created = 0
local function create_one(i)
  if p.ready then
    print("READY " .. i)
    runara.sleep(tonumber(p.ready))
  end
  local ok, d = pcall(droplet.create, options)
  if ok then
    created = created + 1
    print(string.format("CREATED %d %s %s %s", d.id, d.name, d.status, d.ip or "-"))
  elseif p.tolerate == "1" then
    print("CREATE FAILED: " .. tostring(d))
  else
    error(d, 0)
  end
end

if p.ready then droplet.sizes() end
if p.spawn == "1" then
  local tasks = {}
  for i = 1, n do tasks[i] = runara.spawn(create_one, i) end
  for i = 1, n do tasks[i]:join() end
else
  for i = 1, n do create_one(i) end
end
print("ALL ACTIVE " .. created)
if p.sleep then runara.sleep(tonumber(p.sleep)) end
if p.ending == "error" then error("the scenario failed on purpose") end
print("SCRIPT DONE")

-- droplet.vpc, droplet.firewall, droplet.check and create's `vpc` with bad input: each case is
-- pcall'd and reported as "CASE label: error". None of them may reach a create endpoint, except
-- the last section (a VPC in atl1, then a droplet in nyc3 into it: refused before its POST).
local function try(label, fn, ...)
  local ok, err = pcall(fn, ...)
  print("CASE " .. label .. ": " .. (ok and "accepted" or tostring(err)))
end
local many = {}
for i = 1, 40 do many[i] = 1000 + i end
local sources = {}
for i = 1, 20 do sources[i] = "203.0.113." .. i end

try("vpc unknown option", droplet.vpc, { region = "nyc3", colour = "red" })
try("vpc no region", droplet.vpc, {})
try("vpc bad ip_range", droplet.vpc, { region = "nyc3", ip_range = "10.0.0.0/8" })
try("vpc ip_range not cidr", droplet.vpc, { region = "nyc3", ip_range = "10.0.0.300/24" })
try("vpc existing and ip_range", droplet.vpc, { region = "nyc3", existing = "x", ip_range = "10.1.0.0/24" })
try("vpc existing unknown", droplet.vpc, { region = "nyc3", existing = "no-such-vpc" })
try("vpc existing other region", droplet.vpc, { region = "atl1", existing = "default-nyc3" })
try("vpc existing not granted", droplet.vpc, { region = "nyc3", existing = "default-atl1" })
try("vpc not a table", droplet.vpc, "nyc3")
try("firewall unknown option", droplet.firewall, { ports = { 22 }, sources = { "203.0.113.7" }, udp = true })
try("firewall bad port", droplet.firewall, { ports = { 6379, 70000 }, sources = { "203.0.113.7" } })
try("firewall bad range", droplet.firewall, { ports = { "29510-29500" }, sources = { "203.0.113.7" } })
try("firewall port not whole", droplet.firewall, { ports = { 80.5 }, sources = { "203.0.113.7" } })
try("firewall port a table", droplet.firewall, { ports = { {} }, sources = { "203.0.113.7" } })
try("firewall bad source", droplet.firewall, { ports = { 6379 }, sources = { "300.1.1.1" } })
try("firewall bad prefix", droplet.firewall, { ports = { 6379 }, sources = { "10.0.0.0/33" } })
try("firewall no sources", droplet.firewall, { ports = { 6379 } })
try("firewall too many ports", droplet.firewall, { ports = many, sources = { "203.0.113.7" } })
try("firewall too many sources", droplet.firewall, { ports = { 6379 }, sources = sources })
try("firewall huge source", droplet.firewall, { ports = { 6379 }, sources = { string.rep("1", 100000) } })
try("check no size", droplet.check, { count = 2 })
try("check bad count", droplet.check, { size = "s-1vcpu-1gb", count = 0 })
try("check unknown option", droplet.check, { size = "s-1vcpu-1gb", n = 2 })
try("check unknown size", droplet.check, { size = "s-99vcpu-1tb", count = 1 })
try("check over budget", droplet.check, { size = "gpu-mi300x8-1536gb", count = 2 })
try("check too many", droplet.check, { size = "s-1vcpu-1gb", count = 5 })
try("check size not in region", droplet.check, { size = "gpu-h100x8-640gb", count = 2, region = "atl1" })
try("check region not a string", droplet.check, { size = "s-1vcpu-1gb", region = 5 })
print("CHECK FITS " .. tostring(droplet.check{ size = "s-1vcpu-1gb", count = 2 }))
print("CHECK FITS IN REGION " .. tostring(droplet.check{ size = "s-1vcpu-1gb", count = 2, region = "nyc3" }))
try("create vpc not a uuid", droplet.create, { size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3", vpc = "my-vpc" })
try("create vpc a number", droplet.create, { size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3", vpc = 5 })
-- A well-formed id of no VPC this run got from droplet.vpc: an account VPC, perhaps.
try("create vpc not the run's", droplet.create,
    { size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3", vpc = "5a4e1c2b-0d3f-4e5a-8b6c-7d8e9f0a1b2c" })
local vpc = droplet.vpc{ region = "atl1" }
try("second vpc other region", droplet.vpc, { region = "nyc3" })
print("SAME VPC " .. tostring(droplet.vpc{ region = "atl1" }.id == vpc.id))
try("create vpc other region", droplet.create, { size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3", vpc = vpc })
print("BAD INPUT DONE " .. #droplet.list())

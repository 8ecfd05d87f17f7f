-- droplet.create with bad input: each case is pcall'd and reported as "CASE label: error".
-- Nothing here may reach the API's create endpoint.
local function try(label, fn, ...)
  local ok, err = pcall(fn, ...)
  print("CASE " .. label .. ": " .. (ok and "accepted" or tostring(err)))
end
local function opts(over)
  local o = { size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
  for k, v in pairs(over) do
    if v == false then o[k] = nil else o[k] = v end
  end
  return o
end

try("unknown size", droplet.create, opts{ size = "s-99vcpu-1tb" })
try("size not in region", droplet.create, opts{ size = "gpu-mi300x1-192gb", image = "gpu-amd-base", region = "nyc3" })
try("underscore name", droplet.create, opts{ name = "bad_name" })
try("missing size", droplet.create, opts{ size = false })
try("missing image", droplet.create, opts{ image = false })
try("missing region", droplet.create, opts{ region = false })
try("empty size", droplet.create, opts{ size = "" })
try("unknown option", droplet.create, opts{ colour = "red" })
try("size not a string", droplet.create, opts{ size = {} })
try("wait not a boolean", droplet.create, opts{ wait = "yes" })
try("timeout not a number", droplet.create, opts{ timeout = "soon" })
try("tags not a list", droplet.create, opts{ tags = "a,b" })
try("ssh_keys not strings", droplet.create, opts{ ssh_keys = { {} } })
try("bad tag", droplet.create, opts{ tags = { "no spaces allowed" } })
try("huge name", droplet.create, opts{ name = string.rep("a", 50000) })
try("huge tag", droplet.create, opts{ tags = { string.rep("t", 50000) } })
try("long tag", droplet.create, opts{ tags = { string.rep("t", 256) } })
try("long name", droplet.create, opts{ name = string.rep("n", 250) })
try("reserved tag", droplet.create, opts{ tags = { "runara:run-OTHER" } })
try("reserved tag upper case", droplet.create, opts{ tags = { "RUNARA:run-OTHER" } })
try("account tag", droplet.create, opts{ tags = { "runara-user:web", "db-clients" } })
try("user prefix alone", droplet.create, opts{ tags = { "runara-user:" } })
try("name ends in a dash", droplet.create, opts{ name = "web-" })
try("options not a table", droplet.create, "s-1vcpu-1gb")
try("no options", droplet.create)
try("sizes option", droplet.sizes, { cpu = true })
print("BAD INPUT DONE " .. #droplet.list())

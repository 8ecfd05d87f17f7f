-- Attempt (allowed): the user granted the account tag `db-clients` with --allow-tag: the script
-- may set it, in any case (DigitalOcean's tags are case-insensitive), beside its own
-- runara-user: tags. The grant reaches only that name.
-- Why it must pass: a grant is the user's word; it is not a way past the other checks.
-- cloud: fake
-- flags: --allow-tag db-clients
-- expect: safe
local d = droplet.create { tags = { "DB-Clients", "RUNARA-USER:web" }, size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64",
                           region = "nyc3" }
assert(d.id, "the granted tags' droplet was created")
local ok, err = pcall(droplet.create, { tags = { "db-admins" }, size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64",
                                        region = "nyc3" })
assert(not ok and tostring(err):find("--allow-tag db-admins", 1, true), tostring(err))
print("SAFE")

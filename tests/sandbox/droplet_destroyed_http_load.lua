-- Attempt: destroy a droplet, then send load (and a secret) to its old address, which may be
-- someone else's machine by now.
-- Why it must fail: a destroyed droplet's address leaves the reachable set when the destroy is
-- asked for; a literal address is judged before anything is sent.
-- cloud: fake
-- flags: --secret RUNARA_SANDBOX_SECRET
-- expect: error http_load: refusing to connect to 203.0.113.
local d = droplet.create{ size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
d:destroy()
http_load.run{ url = "http://" .. d.ip .. ":8000/", api_key = runara.secret("RUNARA_SANDBOX_SECRET"), requests = 1,
               timeout = 2, quiet = true }
print("ESCAPED: a load (with a secret) was aimed at a destroyed droplet's address")

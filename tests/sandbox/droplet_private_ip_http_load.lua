-- Attempt: aim a load at a droplet's private (VPC) address. From the computer runara runs on, a
-- 10.x address is not the droplet at all but a host of the user's own LAN.
-- Why it must fail: only a droplet's public address joins the run's reachable set; its private
-- one is refused like any LAN address, before anything is sent.
-- cloud: fake
-- expect: error http_load: refusing to connect to 10.116.
local d = droplet.create{ size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
http_load.run{ url = "http://" .. d.private_ip .. ":8000/", requests = 1, timeout = 2, quiet = true }
print("ESCAPED: a load was aimed at a droplet's private address")

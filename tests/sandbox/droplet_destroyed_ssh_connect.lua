-- Attempt: destroy a droplet, then log into its old address, which the cloud may already have
-- handed to someone else's machine, with the run's key and trust on first use.
-- Why it must fail: a destroyed droplet leaves the run's machines and its reachable set at once;
-- its address is an ungranted host from then on.
-- cloud: fake
-- expect: error is not granted
local d = droplet.create{ size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
d:destroy()
ssh.connect(d.ip, { timeout = 1 })
print("ESCAPED: logged into a destroyed droplet's address")

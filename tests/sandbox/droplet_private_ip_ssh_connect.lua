-- Attempt: log into a droplet's private (VPC) address as if it were the droplet, so that the
-- run's key, trust on first use and the run's secrets go to whatever holds that address on the
-- user's LAN.
-- Why it must fail: a private address never names one of the run's machines from here; it is an
-- ungranted host like any other.
-- cloud: fake
-- expect: error is not granted
local d = droplet.create{ size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
ssh.connect(d.private_ip, { timeout = 1 })
print("ESCAPED: logged into a droplet's private address")

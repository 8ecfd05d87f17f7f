-- The droplet table's own API, against the fake: droplet.list, droplet.sizes{gpu=true},
-- droplet.account, d:refresh, d:destroy, d:cost. Every check is an assert; "API OK" at the end.
local small = droplet.create{ name = "small", size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
local big = droplet.create{ name = "big", size = "gpu-h100x8-640gb", image = "gpu-h100x8-base", region = "nyc2" }
print(string.format("CREATED %d %d", small.id, big.id))
assert(small.status == "active" and small.ip, "small is active with an ip")
assert(big.status == "active" and big.ip, "big is active with an ip")
assert(big.size == "gpu-h100x8-640gb" and big.region == "nyc2", "big has its size and region")
assert(big.price_hourly == 23.92, "big costs $23.92/h, got " .. tostring(big.price_hourly))

local list = droplet.list()
assert(#list == 2, "droplet.list() shows both, got " .. #list)
local ids = {}
for _, d in ipairs(list) do ids[d.id] = d end
assert(ids[small.id] and ids[big.id], "droplet.list() shows their ids")
assert(tostring(ids[big.id]):find("big", 1, true), "tostring(droplet) names it: " .. tostring(ids[big.id]))

local gpus = droplet.sizes{ gpu = true }
assert(#gpus > 0, "droplet.sizes{gpu=true} lists GPU sizes")
local seen = {}
for _, s in ipairs(gpus) do
  assert(s.gpu, s.slug .. " has a gpu entry")
  assert(s.gpu.count >= 1, s.slug .. ": gpu.count")
  assert(type(s.gpu.model) == "string" and #s.gpu.model > 0, s.slug .. ": gpu.model")
  assert(s.gpu.vram_gb > 0, s.slug .. ": gpu.vram_gb")
  assert(s.price_hourly > 0 and s.price_monthly > 0, s.slug .. ": prices")
  seen[s.slug] = s
end
assert(seen["gpu-h100x8-640gb"] and seen["gpu-h100x8-640gb"].gpu.count == 8, "the H100x8 has 8 GPUs")
assert(seen["gpu-mi300x1-192gb"] and seen["gpu-mi300x1-192gb"].gpu.vram_gb == 192, "the MI300X has 192 GB")
assert(not seen["s-1vcpu-1gb"], "no CPU size among the GPU sizes")
local all = droplet.sizes()
assert(#all > #gpus, "droplet.sizes() lists the CPU sizes too")

local account = droplet.account()
assert(type(account.email) == "string" and account.droplet_limit > 0 and account.status == "active",
       "droplet.account() answers the account")

local same = small:refresh()
assert(same == small, "d:refresh() returns the droplet itself")
assert(small.status == "active", "refreshed status is active")

local before = small:cost()
assert(small:destroy() == true, "d:destroy() returns true")
for _, d in ipairs(droplet.list()) do assert(d.id ~= small.id, "a destroyed droplet is no longer listed") end
assert(#droplet.list() == 1, "one droplet left")
assert(small:cost() >= before, "the cost of a destroyed droplet stays")

runara.sleep(0.5)
local cost = big:cost()
assert(cost > 0, "an expensive droplet costs something after a while, got " .. cost)
assert(cost < 1, "but not much, got " .. cost)
print(string.format("COST %.6f", cost))
print("API OK")

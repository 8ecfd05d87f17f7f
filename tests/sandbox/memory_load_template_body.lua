-- Attempt: a templated request body of 1 MiB ("{{index}}") at concurrency 256. Every request
-- slot keeps its own expanded copy, off the Lua heap: 287 MB of RSS under a 32 MiB cap (2 GB
-- with a bigger body).
-- Why it must fail: each slot's memory is reserved from the run's budget when the slot is
-- made; the load ends with an error once the budget is spent.
-- expect: error another request slot of http_load-1 needs about 2 MiB
-- flags: --max-memory 32M
local s = http_load.fake_server{ static_body = "ok" }
local b = string.rep("x", 1024 * 1024) .. "{{index}}"
http_load.run{ url = s.url, method = "POST", body = b, concurrency = 256, duration = 2 }
print("ESCAPED")

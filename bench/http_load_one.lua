-- bench/http_load.sh, part (c): one GET, to see what a single http_load.run call costs.
--   runara --allow-host 127.0.0.1:PORT bench/http_load_one.lua url=http://127.0.0.1:PORT/
-- Prints: call_ms (the http_load.run call as the script sees it), load_ms (the load itself,
-- wall_time_s) and e2el_ms (the request).
local t0 = runara.now()
local r = http_load.run{ name = "one", url = runara.params.url, requests = 1 }
local call = runara.now() - t0
assert(r.completed == 1, "the request failed")
print(("call_ms=%.3f load_ms=%.3f e2el_ms=%.3f"):format(call * 1e3, r.wall_time_s * 1e3, r.median_e2el_ms))

-- bench/http_load.sh, part (a): a closed-loop GET load against one URL, for comparison with wrk.
--   runara --allow-host 127.0.0.1:PORT bench/http_load_get.lua url=http://127.0.0.1:PORT/ c=32 t=1 d=5
-- record=none (as wrk, which keeps no per-request file) or all (the default: requests.jsonl).
-- Prints one line: rps=... completed=... failed=... threads=...
local p = runara.params
local r = http_load.run{
  name = "get-c" .. p.c .. "-t" .. p.t, url = p.url,
  concurrency = tonumber(p.c), threads = tonumber(p.t), duration = tonumber(p.d or "5"), record = p.record or "all",
}
print(("rps=%.1f completed=%d failed=%d threads=%d"):format(r.request_throughput, r.completed, r.failed, r.threads))

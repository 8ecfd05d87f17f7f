-- bench/http_load_soak.sh: a closed-loop streaming soak against `runara serve-fake-llm`.
--   runara --allow-host 127.0.0.1:PORT bench/http_load_soak.lua url=http://127.0.0.1:PORT [c=512] [s=180] [lines=N]
-- c: streams, s: seconds, lines: max_request_lines (default http_load's, 1,000,000). Prints one
-- line of key=value pairs when the load ends.
local p = runara.params
local c, s = tonumber(p.c) or 512, tonumber(p.s) or 180
local r = http_load.run{
  name = "soak-c" .. c, url = p.url, model = "fake-model", max_tokens = 16,
  concurrency = c, duration = s, quiet = true, max_request_lines = tonumber(p.lines),
}
print(("completed=%d failed=%d left_out=%d threads=%d duration=%.1f req_s=%.0f ttft_p50=%.3f"):format(
  r.completed, r.failed, r.request_lines_left_out, r.threads, r.duration, r.request_throughput, r.median_ttft_ms))

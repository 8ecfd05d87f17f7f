-- bench/http_load.sh, part (b): a closed-loop streaming load against an OpenAI-compatible server
-- (`runara serve-fake-llm --ttft-ms 50 --itl-ms 10 --output-tokens 128`).
--   runara --allow-host 127.0.0.1:PORT bench/http_load_stream.lua url=http://127.0.0.1:PORT c=256 [n=512]
-- n: measured requests (default 2 * c); tokens: max_tokens (128). Prints one line of key=value pairs.
local p = runara.params
local c = tonumber(p.c)
local r = http_load.run{
  name = "stream-c" .. c, url = p.url, model = "fake-model", max_tokens = tonumber(p.tokens) or 128,
  concurrency = c, requests = tonumber(p.n) or 2 * c, quiet = true,
}
print(("completed=%d failed=%d threads=%d duration=%.3f itl_p50=%.4f itl_p99=%.4f ttft_p50=%.3f ttft_p99=%.3f tok_s=%.0f"):format(
  r.completed, r.failed, r.threads, r.duration, r.median_itl_ms, r.p99_itl_ms, r.median_ttft_ms, r.p99_ttft_ms,
  r.output_throughput))

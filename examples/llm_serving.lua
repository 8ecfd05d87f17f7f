-- llm_serving.lua: measure an OpenAI-compatible LLM server the way the reference scenario does,
-- rehearsed against the built-in simulated server (no GPU, no account, no money).
-- Run it with: build/runara examples/llm_serving.lua [requests=16]
--
-- Against a real server, drop fake_server and point url at it, e.g.
--   url = "http://" .. d.ip .. ":8000", model = "meta-llama/Llama-3.3-70B-Instruct"
-- (a droplet this run created is reachable; anything else needs --allow-host).

local requests = tonumber(runara.params.requests or "16")
watchdog.limit(120)

-- A simulated vLLM: first token after 80 ms, then one token every 10 ms.
local server = http_load.fake_server{ ttft_ms = 80, itl_ms = 10, output_tokens = 32 }

-- Single stream, then concurrency 8 and 32: one result per point of the sweep. http_load prints
-- a row per point as it finishes and writes llama-sim/sweep.csv and sweep.json by itself; a point
-- whose concurrency the requests cannot reach (32 streams, 16 requests) says so in its row.
local points = http_load.run{
  name = "llama-sim", url = server.url, model = server.model,
  prompts = { input_tokens = 512, range_ratio = 0.1 }, max_tokens = 32, ignore_eos = true,
  concurrency = { 1, 8, 32 }, requests = requests, warmup = 2,
  slo = { ttft_ms = 200, tpot_ms = 20 },
}

for _, r in ipairs(points) do
  runara.result("concurrency_" .. r.max_concurrency, {
    output_throughput = r.output_throughput, median_ttft_ms = r.median_ttft_ms,
    p99_ttft_ms = r.p99_ttft_ms, median_tpot_ms = r.median_tpot_ms, failed = r.failed,
  })
end

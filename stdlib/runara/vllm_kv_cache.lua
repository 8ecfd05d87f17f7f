-- runara.vllm_kv_cache: the KV cache vLLM says it allocated, read from its own log: vLLM 0.x's
-- "# GPU blocks: N, # CPU blocks: M" (gpu_executor.py) and the V1 engine's
-- "GPU KV cache size: N tokens" (kv_cache_utils.py). Reports show it beside the VRAM figure,
-- which under vLLM is its up-front allocation (gpu_memory_utilization), not the model's need.
--
--   local kv = require("runara.vllm_kv_cache").parse(server:log_tail(2000))
--   --> { gpu_blocks = 48392, text = "48392 GPU blocks (vLLM's log)" } or nil
local M = {}

function M.parse(log)
  if type(log) ~= "string" then return nil end
  local out = {}
  -- The last of each: a server that restarted logs its latest allocation last.
  for n in log:gmatch("# GPU blocks: (%d+)") do out.gpu_blocks = tonumber(n) end
  for n in log:gmatch("GPU KV cache size: ([%d,]+) tokens") do out.tokens = tonumber((n:gsub(",", ""))) end
  if not out.gpu_blocks and not out.tokens then return nil end
  local parts = {}
  if out.gpu_blocks then parts[#parts + 1] = out.gpu_blocks .. " GPU blocks" end
  if out.tokens then parts[#parts + 1] = out.tokens .. " tokens" end
  out.text = table.concat(parts, ", ") .. " (vLLM's log)"
  return out
end

return M

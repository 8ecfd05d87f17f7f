-- The models an OpenAI-compatible server lists at GET /v1/models, in its order: what
-- `runara bench` sends when --model is not given (the first, as `vllm bench serve` does).
-- Reads with metrics.get (the URL's host must be granted); errors say what the server did.
local M = {}

-- ids(url): the model ids, or nil and why. `url` is the server's base, with or without /v1.
function M.ids(url)
  local base = tostring(url):gsub("/+$", ""):gsub("/v1$", "")
  local ok, r = pcall(metrics.get, base .. "/v1/models", { timeout = 10 })
  if not ok then return nil, "GET " .. base .. "/v1/models failed: " .. tostring(r):match("[^\n]*") end
  if r.status ~= 200 then return nil, ("GET %s/v1/models answered HTTP %d"):format(base, r.status) end
  -- Model entries only: vLLM nests "permission" objects with ids of their own in each model
  -- (object "model_permission"); an id counts when its object says "model" or nothing.
  local ids, body = {}, tostring(r.body)
  for at, id in body:gmatch('()"id"%s*:%s*"([^"]+)"') do
    local object = body:sub(at, at + 400):match('^[^{}]-"object"%s*:%s*"([^"]+)"')
    if object == nil or object == "model" then ids[#ids + 1] = id end
  end
  if #ids == 0 then return nil, "GET " .. base .. "/v1/models lists no model" end
  return ids
end

return M

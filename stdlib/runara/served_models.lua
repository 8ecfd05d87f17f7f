-- The models an OpenAI-compatible server lists at GET /v1/models, in its order: what
-- `runara bench` sends when --model is not given (the first, as `vllm bench serve` does).
-- Reads with metrics.get (the URL's host must be granted); errors say what the server did.
local M = {}

-- in_body(body): the ids of a /v1/models answer ({"data": [{"id": ...}, ...]}), in its order
-- (empty when it lists none), or nil and why when the body is not JSON.
function M.in_body(body)
  local ok, doc = pcall(runara.json.decode, tostring(body))
  if not ok then return nil, "not JSON: " .. (tostring(doc):match("runara%.json%.decode: ([^\n]*)") or tostring(doc)) end
  local ids = {}
  local data = type(doc) == "table" and doc.data
  if type(data) ~= "table" then return ids end
  for _, model in ipairs(data) do
    if type(model) == "table" and type(model.id) == "string" then ids[#ids + 1] = model.id end
  end
  return ids
end

-- ids(url): the model ids, or nil and why. `url` is the server's base, with or without /v1.
function M.ids(url)
  local base = tostring(url):gsub("/+$", ""):gsub("/v1$", "")
  local ok, r = pcall(metrics.get, base .. "/v1/models", { timeout = 10 })
  if not ok then return nil, "GET " .. base .. "/v1/models failed: " .. tostring(r):match("[^\n]*") end
  if r.status ~= 200 then return nil, ("GET %s/v1/models answered HTTP %d"):format(base, r.status) end
  local ids, why = M.in_body(r.body)
  if not ids then return nil, "GET " .. base .. "/v1/models answered " .. why end
  if #ids == 0 then return nil, "GET " .. base .. "/v1/models lists no model" end
  return ids
end

return M

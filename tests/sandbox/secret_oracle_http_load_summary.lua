-- Attempt: the redaction oracle through http_load's return value. Aim one request per candidate
-- at the run's own simulated server with the candidate in the URL's query and in the model
-- name, and look for the summary (url, model_id) that came back masked.
-- Why it must fail: what the script chose itself comes back unredacted; only results.json
-- (which the script cannot read) is redacted whole.
-- expect: safe
-- flags: --secret RUNARA_SANDBOX_SECRET_PIN
-- env: RUNARA_SANDBOX_SECRET_PIN=482913
local masked = 0
for pin = 482912, 482914 do
  -- A server of that model: the simulated server refuses a model it does not serve, as vLLM does.
  local server = http_load.fake_server{ ttft_ms = 0, itl_ms = 0, output_tokens = 1, model = "m" .. pin }
  local r = http_load.run{ url = server.url .. "/v1/completions?q=" .. pin, model = "m" .. pin,
                           max_tokens = 1, concurrency = 1, requests = 1, name = "c" .. pin }
  if not r.url:find(tostring(pin), 1, true) then masked = masked + 1 end
  if not tostring(r.model_id):find(tostring(pin), 1, true) then masked = masked + 1 end
end
if masked > 0 then print("ESCAPED: " .. masked .. " field(s) of the summary came back masked") end
print("SAFE")

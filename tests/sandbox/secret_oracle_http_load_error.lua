-- Attempt: the redaction oracle through http_load's error message. Aim a load at the run's own
-- simulated server, which answers every request with HTTP 500, under a name that is a
-- candidate; the error quotes the results folder (and so the name): look for the candidate
-- whose error came back masked.
-- Why it must fail: errors go back to the script unredacted except for what the server sent
-- (error samples), so the script's own text in them cannot depend on a secret's value.
-- expect: safe
-- flags: --secret RUNARA_SANDBOX_SECRET_PIN
-- env: RUNARA_SANDBOX_SECRET_PIN=482913
local server = http_load.fake_server{ ttft_ms = 0, itl_ms = 0, output_tokens = 1, error_500 = 1 }
local masked = 0
for pin = 482912, 482914 do
  local name = "c" .. pin
  local ok, err = pcall(http_load.run, { url = server.url, model = server.model, max_tokens = 1, concurrency = 1,
                                         requests = 1, name = name })
  if ok then print("ESCAPED? every request failed, yet the load succeeded") end
  if not tostring(err):find(name, 1, true) then masked = masked + 1 end
end
if masked > 0 then print("ESCAPED: " .. masked .. " error message(s) came back masked") end
print("SAFE")

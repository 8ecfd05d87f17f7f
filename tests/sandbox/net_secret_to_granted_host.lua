-- Attempt: send a secret to a host the user granted with --allow-host (say, a server that echoes
-- requests back, base64-encoded or not), to read the secret from the response.
-- Why it must fail: a secret goes only to the run's own machines and servers and where it was
-- bound with --secret NAME@HOST[:PORT]; --allow-host alone does not bind it.
-- expect: error refusing to send secret RUNARA_SANDBOX_SECRET to 127.0.0.1:1
-- flags: --allow-host 127.0.0.1:1 --secret RUNARA_SANDBOX_SECRET
local ok, err = pcall(http_load.run, { url = "http://127.0.0.1:1/echo", requests = 1,
                                       headers = { ["X-Echo"] = runara.secret("RUNARA_SANDBOX_SECRET") } })
if ok then print("ESCAPED: a secret was sent to a host it was not bound to") end
error(err, 0)

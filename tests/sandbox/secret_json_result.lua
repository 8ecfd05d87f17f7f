-- Attempt: get a secret's value written out as data: runara.result (results.json and the
-- result event) and runara.write_file with a table (JSON), with the handle as a value and
-- nested in tables.
-- Why it must fail: handles serialize as "<secret NAME>"; the harness also scans every file
-- of the output folder for the value.
-- expect: safe
-- flags: --secret RUNARA_SANDBOX_SECRET
-- env: RUNARA_SANDBOX_SECRET=hunter2-runara-sandbox-6b1f0c
local h = runara.secret("RUNARA_SANDBOX_SECRET")
runara.result("token", h)
runara.result("nested", { auth = { header = h }, list = { h, h } })
runara.write_file("leak.json", { token = h })
print("SAFE")

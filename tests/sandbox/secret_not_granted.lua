-- Attempt: ask for a secret that was not granted with --secret (the variable is set in the
-- run's environment by the harness).
-- Why it must fail: only --secret NAME makes a handle available.
-- expect: error was not granted
local h = runara.secret("RUNARA_SANDBOX_SECRET")
print("ESCAPED: got a handle for a secret that was not granted: " .. tostring(h))

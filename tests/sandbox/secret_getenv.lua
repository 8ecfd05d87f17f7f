-- Attempt: read a secret's value directly from the environment with os.getenv, even with the
-- variable also granted through --allow-env.
-- Why it must fail: a variable passed as a secret is never readable with os.getenv.
-- expect: error is a secret
-- flags: --secret RUNARA_SANDBOX_SECRET --allow-env RUNARA_SANDBOX_SECRET
-- env: RUNARA_SANDBOX_SECRET=hunter2-runara-sandbox-6b1f0c
local value = os.getenv("RUNARA_SANDBOX_SECRET")
print("ESCAPED: os.getenv returned the secret: " .. tostring(value):reverse())

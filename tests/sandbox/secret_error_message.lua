-- Attempt: leak a secret through an error message: raise the handle itself as the error
-- object, so that the runtime's error report (stderr, the failure message, the traceback)
-- converts it to text.
-- Why it must fail: error objects that are handles are described as "<secret NAME>".
-- expect: error <secret RUNARA_SANDBOX_SECRET>
-- flags: --secret RUNARA_SANDBOX_SECRET
-- env: RUNARA_SANDBOX_SECRET=hunter2-runara-sandbox-6b1f0c
local h = runara.secret("RUNARA_SANDBOX_SECRET")
local task = runara.spawn(function() error(h) end)
local ok, err = pcall(task.join, task)
print("joined:", ok, tostring(err))
error(h)

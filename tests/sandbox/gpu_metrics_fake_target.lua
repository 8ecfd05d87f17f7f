-- Attempt: hand gpu_metrics a look-alike target (a table, or another runara object) so it runs
-- its commands somewhere the run never opened, or dereferences something that is not a target.
-- Why it must fail: targets are found by identity in the run's registry of command targets.
-- expect: error gpu_metrics.start: argument #1 (target) must be an ssh session or gpu_metrics.local()
local fake = setmetatable({}, { __metatable = "gpu_metrics.localhost" })
gpu_metrics.start(fake, { interval = 1 })

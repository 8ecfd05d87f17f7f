-- Attempt: read run.log back through runara.read_file (the output folder is granted here with
-- --allow-read on the working folder) and look for which logged candidate came back masked.
-- Why it must fail: runara redacts what it writes to the output folder, so nothing in that
-- folder is readable by the script, whatever --allow-read grants.
-- expect: error output folder
-- flags: --allow-read {base}/run --secret RUNARA_SANDBOX_SECRET_PIN
-- env: RUNARA_SANDBOX_SECRET_PIN=482913
local base = runara.params.base
for pin = 482900, 482999 do runara.log("candidate " .. pin) end
local dir = runara.out_dir()
if dir:sub(1, 1) ~= "/" then dir = base .. "/run/" .. dir end
local log = runara.read_file(dir .. "/run.log")
if log:find("<", 1, true) then print("ESCAPED: run.log read back, a candidate came back masked") end
print("ESCAPED: run.log was readable")

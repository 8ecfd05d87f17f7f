-- Attempt: write next to the script with an absolute path built from what the script can learn
-- (runara.params.base is the harness's temporary folder; arg[0] the script's own path).
-- Why it must fail: absolute paths are refused.
-- expect: error is absolute
local base = runara.params.base or "/tmp"
runara.write_file(base .. "/escape-marker-write-absolute", "pwned")
print("ESCAPED: wrote to " .. base)

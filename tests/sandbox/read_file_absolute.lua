-- Attempt: read the process environment, where the --secret values live, through an absolute
-- path: /proc/self/environ.
-- Why it must fail: absolute paths outside the allowed folders are refused.
-- expect: error is not allowed
local data = runara.read_file("/proc/self/environ")
print("ESCAPED: read /proc/self/environ: " .. data:reverse())

-- Attempt: climb out through a /proc indirection whose text looks unrelated to the folders:
-- /proc/self/cwd/../outside/secret.txt (the run's working folder is next to outside/).
-- Why it must fail: the path is resolved (symlinks included) before the check.
-- expect: error is not allowed
local data = runara.read_file("/proc/self/cwd/../outside/secret.txt")
print("ESCAPED: read through /proc/self/cwd: " .. data:reverse())

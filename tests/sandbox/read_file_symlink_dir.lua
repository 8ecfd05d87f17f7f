-- Attempt: read through a symlinked folder inside the script's folder (the harness creates
-- link_outside -> ../outside), so the path text stays "inside".
-- Why it must fail: the check applies to the resolved path.
-- expect: error is not allowed
local data = runara.read_file("link_outside/secret.txt")
print("ESCAPED: read through a symlinked folder: " .. data:reverse())

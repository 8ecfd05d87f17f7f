-- Attempt: read a symlink inside the script's folder that points outside it (the harness
-- creates link_secret.txt -> ../outside/secret.txt).
-- Why it must fail: the check applies to the resolved path, not the name in the folder.
-- expect: error is not allowed
local data = runara.read_file("link_secret.txt")
print("ESCAPED: read through a symlinked file: " .. data:reverse())

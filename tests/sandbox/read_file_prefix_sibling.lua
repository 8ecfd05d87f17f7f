-- Attempt: read a sibling folder whose name starts with the script folder's name (the harness
-- creates script-evil/secret.txt next to script/): a naive prefix check ("starts with
-- /tmp/.../script") would accept /tmp/.../script-evil/secret.txt.
-- Why it must fail: folder containment is checked on whole path components.
-- expect: error is not allowed
local data = runara.read_file("../script-evil/secret.txt")
print("ESCAPED: read a sibling folder sharing the script folder's prefix: " .. data:reverse())

-- Attempt: delete or rename files (the script itself, a neighbour) with os.remove/os.rename,
-- or get a host temp file name with os.tmpname.
-- Why it must fail: none of these are in the sandboxed os table.
-- expect: error attempt to call field 'remove'
local name = (arg and arg[0]) or "env_os_remove_rename.lua"
os.remove(name)
print("ESCAPED: os.remove deleted " .. name)

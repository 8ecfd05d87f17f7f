-- Attempt: read the registry with debug.getregistry() (it holds _LOADED with the full os and
-- io tables, the sandbox's loaded-module table, task threads...).
-- Why it must fail: the debug library is not opened in the sandbox.
-- expect: error attempt to index global 'debug'
local registry = debug.getregistry()
print("ESCAPED: the registry is reachable: " .. tostring(registry._LOADED))

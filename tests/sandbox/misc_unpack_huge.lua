-- Attempt: unpack a huge range (1e8 values) to exhaust the Lua stack / C stack in one call.
-- Why it must fail: LuaJIT checks the number of results first: "too many results to unpack".
-- expect: error too many results to unpack
local values = { unpack({}, 1, 1e8) }
print("ESCAPED: unpacked " .. #values .. " values")

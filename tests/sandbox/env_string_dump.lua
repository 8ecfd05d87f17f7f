-- Attempt: string.dump a function to get its bytecode, patch it, and load it back (the classic
-- LuaJIT bytecode escape: crafted bytecode reads and writes arbitrary memory).
-- Why it must fail: string.dump is removed from the string table (and so from string methods).
-- expect: error attempt to call field 'dump'
local code = string.dump(function() return 1 end)
print("ESCAPED: string.dump is reachable: " .. #code .. " bytes")

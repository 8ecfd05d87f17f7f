-- Attempt: overflow string.format's fixed-size conversion buffer with a huge width or
-- precision ("%99999999d", "%.99999999f"), a classic C-level overflow in Lua 5.1 ports.
-- Why it must fail: LuaJIT rejects widths/precisions over two digits ("invalid option").
-- expect: error invalid option
local s = string.format("%99999999d", 1)
print("ESCAPED: formatted " .. #s .. " characters")

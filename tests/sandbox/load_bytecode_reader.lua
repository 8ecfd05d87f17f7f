-- Attempt: hand load() a reader function that returns the bytecode one byte at a time, so
-- that no single piece looks like a binary chunk (the ESC byte comes alone, first).
-- Why it must fail: the mode is checked on the stream's first byte, whatever the pieces are.
-- expect: error wrong mode
local bytecode = string.char(27,76,74,2,10,51,2,0,3,0,2,0,4,54,0,0,0,39,2,1,0,66,0,2,1,75,0,1,0,26,69,83,
  67,65,80,69,68,58,32,98,121,116,101,99,111,100,101,32,114,97,110,10,112,114,105,110,116,0)
local i = 0
local fn, err = load(function()
  i = i + 1
  if i > #bytecode then return nil end
  return bytecode:sub(i, i)
end, "=reader")
if fn then fn() end
error(err, 0)

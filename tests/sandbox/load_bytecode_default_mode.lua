-- Attempt: load bytecode without naming a mode (Lua 5.1's load has no mode argument, so a
-- wrapper might pass nil through and let LuaJIT accept both).
-- Why it must fail: the wrapper always loads with mode "t"; LuaJIT then refuses binary chunks.
-- expect: error wrong mode
local bytecode = string.char(27,76,74,2,10,51,2,0,3,0,2,0,4,54,0,0,0,39,2,1,0,66,0,2,1,75,0,1,0,26,69,83,
  67,65,80,69,68,58,32,98,121,116,101,99,111,100,101,32,114,97,110,10,112,114,105,110,116,0)
local fn, err = load(bytecode)
if fn then fn() end
error(err, 0)

-- Attempt: a reader that first returns a harmless text piece (a comment line) and the
-- bytecode after it, hoping the mode check only looks at the first piece.
-- Why it must fail: once the stream started as text, the rest is parsed as Lua source:
-- bytecode in the middle of a text chunk is a syntax error, never executed.
-- expect: error unexpected symbol
local bytecode = string.char(27,76,74,2,10,51,2,0,3,0,2,0,4,54,0,0,0,39,2,1,0,66,0,2,1,75,0,1,0,26,69,83,
  67,65,80,69,68,58,32,98,121,116,101,99,111,100,101,32,114,97,110,10,112,114,105,110,116,0)
local pieces = { "-- a comment\n", bytecode }
local i = 0
local fn, err = load(function()
  i = i + 1
  return pieces[i]
end, "=reader")
if fn then fn() end
error(err, 0)

-- Attempt: ship a module as precompiled LuaJIT bytecode (the harness writes binmod.lua with
-- `luajit -b` output) so that require runs unverified bytecode.
-- Why it must fail: require loads modules as text chunks only.
-- expect: error wrong mode
require("binmod")
print("ESCAPED: require ran a bytecode module")

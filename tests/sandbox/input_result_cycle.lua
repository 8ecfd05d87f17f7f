-- Attempt: send the Lua-to-JSON writer round a cycle (a table that contains itself, two
-- levels down) through runara.write_file, hoping for endless recursion.
-- Why it must fail: the writer tracks the tables on its path and refuses a repeat.
-- expect: error contains itself (a cycle)
local a, b = {}, {}
a.next, b.next = b, a
runara.write_file("cycle.json", { start = a })
print("ESCAPED: a cyclic table was written as JSON")
